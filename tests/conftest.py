"""Suite-wide test settings.

Hypothesis' per-example deadline is off: on a loaded 2-core CI machine a slow example is not
a failure (performance is measured by the benchmarks in loadtests/, never by timing tests).
"""

from hypothesis import settings

settings.register_profile("croupier", deadline=None, print_blob=True)
settings.load_profile("croupier")
