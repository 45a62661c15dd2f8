"""verirl on Ray: the ``ray`` executor (verifier actors), rollout-engine replicas and a
data-parallel learner group (the ``ray`` placement).

A plug-in: nothing in the rest of the library imports this package. Its entry point
(``verirl.plugins``: ``verirl.integrations.ray.placement``) registers the ``ray`` placement and
executor the first time a config asks for a name the registries do not hold, and Ray itself is
imported only when one of them is built. Modules:

- :mod:`~verirl.integrations.ray.settings`: their parameter models (``run.placement.params``,
  ``verification.executor.params``);
- :mod:`~verirl.integrations.ray.cluster`: joining or starting Ray; the actors' import path;
- :mod:`~verirl.integrations.ray.executor`: the verifier pool;
- :mod:`~verirl.integrations.ray.rollout`: engine replicas behind the engine interface;
- :mod:`~verirl.integrations.ray.learner`: K learner actors in one torch.distributed group.
"""
