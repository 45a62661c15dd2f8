"""Arrays: subsequences, partitions, scans, sorting, placements and intervals."""
