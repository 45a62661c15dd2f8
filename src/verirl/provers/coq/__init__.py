"""The Coq backend: sentence scanning, safety filters, per-tactic attempts, the ``coqidetop``
worker pool and the ``coqc`` checker, and the Coq theorem loader."""
