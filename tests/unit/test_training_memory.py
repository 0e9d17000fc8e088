"""ZeRO/FSDP memory per GPU and the pipeline bubble (core.training_memory): the ZeRO paper's Fig. 1,
article 004 section 07's 4x / 8x / N_d x and 50 %, and (P-1)/(M+P-1)."""

import pytest

from core.model_catalogue import get_model
from core.scenario import Scenario
from core.training_memory import pipeline_bubble, zero_memory, zero_stages


def test_zero_paper_figure1():
    # Rajbhandari et al. 2020, Fig. 1: Ψ = 7.5B, N_d = 64, K = 12 -> 120 GB, 31.4 GB, 16.6 GB, 1.9 GB per GPU.
    totals = [round(s.total_bytes / 1e9, 1) for s in zero_stages(7.5e9, 64)]
    assert totals == [120.0, 31.4, 16.6, 1.9]


def test_zero_stage_breakdown_by_hand():
    s1 = zero_memory(7.5e9, 64, 1)
    assert (s1.weight_bytes, s1.gradient_bytes, s1.optimizer_bytes) == (15e9, 15e9, 12 * 7.5e9 / 64)
    s3 = zero_memory(7.5e9, 64, 3)
    assert s3.weight_bytes == 2 * 7.5e9 / 64 and s3.reduction == 64


def test_article_reductions_4x_8x_nd_and_half_again_the_communication():
    # Article 004 section 07: "4x, 8x, then N_d x memory reduction by stage; stage 3 adds about 50%
    # communication volume" - the first two as N_d grows.
    big = zero_stages(1e9, 1_000_000)
    assert [round(s.reduction, 2) for s in big] == [1.0, 4.0, 8.0, 1_000_000.0]
    assert [s.communication_factor for s in big] == [1.0, 1.0, 1.0, 1.5]
    assert big[3].communication_elements == 3e9 and big[0].communication_elements == 2e9


def test_for_a_catalogue_model():
    model = get_model("llama-3-70b")
    stages = zero_stages(model, 8)
    assert stages[0].total_bytes == 16 * model.n_params
    assert stages[2].total_bytes == pytest.approx(2 * model.n_params + 14 * model.n_params / 8)
    assert stages[3].to_json()["total_bytes"] == pytest.approx(2 * model.n_params)


def test_pipeline_bubble():
    assert pipeline_bubble(4, 4) == pytest.approx(3 / 7)
    assert pipeline_bubble(1, 8) == 0.0
    assert pipeline_bubble(8, [1, 8, 64]).tolist() == pytest.approx([7 / 8, 7 / 15, 7 / 71])
    # M >> P keeps the stages busy (article 004 section 07)
    assert pipeline_bubble(8, 800) < 0.01


def test_the_scenarios_bubble_is_this_at_m_equals_pp():
    r = Scenario(tp=2, pp=4).evaluate()
    assert r.pipeline_bubble == pytest.approx(pipeline_bubble(4, 4))


@pytest.mark.parametrize("bad", [
    lambda: zero_memory(1e9, 8, 4),
    lambda: zero_memory(1e9, 0, 1),
    lambda: zero_memory(0, 8, 1),
    lambda: pipeline_bubble(0, 4),
    lambda: pipeline_bubble(4, 0),
])
def test_invalid_input_raises(bad):
    with pytest.raises(ValueError):
        bad()


def test_the_articles_4x_and_8x_are_said_as_the_limits_beside_the_stages_at_64_gpus():
    """A lecturer's audit: 3.82× and 7.21× sat under the article's quoted "4×, 8×" with no word of why."""
    from core.training_memory import limits_text

    assert round(16 / (2 + 2 + 12 / 64), 2) == 3.82 and round(16 / (2 + 14 / 64), 2) == 7.21
    text = limits_text(64)
    assert text.endswith("at N_d = 64, 16 / 4.1875 = 3.82× and 16 / 2.21875 = 7.21×.")
    assert "16 / 4.012 = 3.99× and 16 / 2.014 = 7.94×" in limits_text(1000)  # nearer the limits
    from app.serving_system import zero_html
    from core.batching import SHAREGPT
    from core.scenario import Scenario
    assert "are the limits as N_d grows" in zero_html(Scenario(), SHAREGPT, 16)
