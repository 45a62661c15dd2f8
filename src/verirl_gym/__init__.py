"""verirl's gym as a verifiers 0.4.0 taskset package: ``--env.taskset.id verirl-gym``.

verifiers imports a taskset id as a top-level module (``verirl-gym`` → ``verirl_gym``) and
takes the one ``Taskset`` subclass in its ``__all__``; the implementation lives in
:mod:`verirl.integrations.verifiers`.
"""

from verirl.integrations.verifiers import VerirlTaskset

__all__ = ["VerirlTaskset"]
