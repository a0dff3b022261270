"""What the sizing engine's property tests share: their Hypothesis settings, JSON of any shape,
the bundled models' config.json files and the KV-cache dtypes."""

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.precision import Dtype

ENGINE = settings(max_examples=100, deadline=None)
API = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=8), children, max_size=4),
    ),
    max_leaves=8,
)

BUNDLED_CONFIGS = {slug: model.config for slug, model in bundled_models().items()}
KV_DTYPES = [Dtype.FP32, Dtype.BF16, Dtype.FP16, Dtype.FP8]
