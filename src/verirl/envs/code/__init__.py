"""Code: program synthesis checked by running the model's program on hidden tests."""
