"""verirl on Ray: the ``ray`` executor (verifier actors), rollout-engine replicas and a
data-parallel learner group (``run.backend: ray``).

Nothing in the rest of the library imports this package unless Ray is asked for, so a local
run never imports Ray. Modules:

- :mod:`~verirl.integrations.ray.cluster`: joining or starting Ray; the actors' import path;
- :mod:`~verirl.integrations.ray.executor`: the verifier pool;
- :mod:`~verirl.integrations.ray.rollout`: engine replicas behind the engine interface;
- :mod:`~verirl.integrations.ray.learner`: K learner actors in one torch.distributed group.
"""
