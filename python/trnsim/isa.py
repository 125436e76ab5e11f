"""trnsim.isa: one function per instruction of the core, NKI's ``nki.isa``.

Import it as ``import trnsim.isa as nisa``. Each function records exactly its instruction, with
the destination first (``nisa.tensor_tensor(dst, a, b, op=nl.add)``). Operators and activation
functions are given as NKI gives them: ``nl.add``, ``np.maximum``, ``nl.exp``, or by name.
"""
from ._trnsim import ActivationFunction, AluOp, CollectiveOp, Engine, ReduceCmd  # noqa: F401
from ._trnsim.isa import *  # noqa: F401,F403 (the bound functions are the module's API)

# Engines, as NKI names them.
tensor_engine = Engine.pe
scalar_engine = Engine.act
vector_engine = Engine.dve
gpsimd_engine = Engine.pool
sync_engine = Engine.sp
