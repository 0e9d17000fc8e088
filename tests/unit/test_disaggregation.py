"""Prefill/decode pools against one colocated pool (core.disaggregation), by hand from the lab's numbers."""

import math

import pytest

from core.disaggregation import TPOT_TARGET_S, TTFT_TARGET_S, md1_max_rate, md1_ttft, plan_pools
from core.scenario import Scenario


def test_md1_queue_by_hand():
    # DistServe section 3.1, eq. 1: D + λD²/(2(1 − λD)).
    assert md1_ttft(5.0, 0.1) == pytest.approx(0.1 + 5 * 0.01 / (2 * 0.5))
    assert md1_ttft(10.0, 0.1) == math.inf  # at λD = 1 the queue never empties
    assert md1_max_rate(0.5, 0.1) == pytest.approx(2 * 0.4 / (0.1 * 0.9))
    assert md1_ttft(md1_max_rate(0.5, 0.1), 0.1) == pytest.approx(0.5)
    assert md1_max_rate(0.1, 0.2) == 0.0


@pytest.fixture(scope="module")
def article():
    """The article's 70B on two H100s, 2,000-token prompts (article 004's prefill), 300 tokens out, 4 req/s."""
    return plan_pools(Scenario(tp=2), rate=4.0, prompt_len=2000, output_len=300)


def test_prefill_pool_by_hand(article):
    d = Scenario(tp=2, prompt_len=2000).evaluate().ttft_s  # one prompt alone
    rp = 2 * (TTFT_TARGET_S - d) / (d * (2 * TTFT_TARGET_S - d))
    assert article.prefill.rate_per_instance == pytest.approx(rp)
    assert article.prefill.gpus == math.ceil(4.0 / rp) * 2
    assert article.prefill.intensity == 2 * 2000 / 2  # k = P at batch 1: past the ridge
    assert article.prefill.attainable_flop_per_s == pytest.approx(989.4e12)


def test_decode_pool_by_hand(article):
    # KV read per sequence: P + O/2 = 2,150 tokens; the largest batch that fits there meets the 200 ms TPOT.
    held = Scenario(tp=2, context=2150)
    b = held.evaluate().max_batch
    r = held.clone(batch=b).evaluate()
    assert article.context == 2150 and article.decode.batch == b == 34
    assert article.decode.tpot_s == pytest.approx(r.tpot_s, rel=1e-12) and r.tpot_s < TPOT_TARGET_S
    rd = b / (299 * r.tpot_s)  # each request holds a slot for its 299 decoded tokens
    assert article.decode.rate_per_instance == pytest.approx(rd)
    assert article.decode.gpus == math.ceil(4.0 / rd) * 2
    assert article.decode.intensity == 2 * b / 2  # below the ridge: the two pools sit on opposite sides
    assert article.decode.intensity < article.ridge_point < article.prefill.intensity


def test_colocated_pool_by_hand(article):
    c = article.colocated
    d = Scenario(tp=2, prompt_len=2000).evaluate().ttft_s
    r = Scenario(tp=2, context=2150, batch=c.batch).evaluate()
    lam = c.batch / (299 * r.tpot_s + c.batch * d)  # Little's law with prefills stalling the decode steps
    assert c.rate_per_instance == pytest.approx(lam)
    assert c.tpot_s == pytest.approx(r.tpot_s / (1 - lam * d))
    assert c.ttft_s == pytest.approx(md1_ttft(lam, d) + r.verify_step_time_s / 2)
    assert c.gpus == math.ceil(4.0 / lam) * 2
    # the time-blend of the two phases sits between them on the roofline
    assert article.decode.intensity < c.intensity < article.prefill.intensity


def test_a_tight_tpot_target_is_where_splitting_pays():
    # 30 ms per output token: decode alone meets it (25.8 ms at B = 34), but colocated, each prefill of
    # 158 ms stalls every sequence, so only a trickle of requests keeps TPOT within it.
    tight = plan_pools(Scenario(tp=2), rate=4.0, prompt_len=2000, output_len=300, tpot_target_s=0.030)
    assert tight.decode.tpot_s <= 0.030
    assert tight.disaggregated_goodput_per_gpu > 1.5 * tight.colocated.goodput_per_gpu
    assert tight.disaggregated_gpus < tight.colocated.gpus
    p, dec = tight.prefill, tight.decode
    pair = 1 / (2 / p.rate_per_instance + 2 / dec.rate_per_instance)  # GPU-seconds per request, inverted
    assert tight.disaggregated_goodput_per_gpu == pytest.approx(pair)


def test_a_ttft_target_below_one_prefill_cannot_be_met():
    out = plan_pools(Scenario(tp=2), rate=1.0, prompt_len=2000, output_len=100, ttft_target_s=0.1)
    assert out.prefill.rate_per_instance == 0 and out.prefill.gpus is None and out.disaggregated_gpus is None
    assert out.to_json()["prefill"]["gpus"] is None


def test_nothing_fits_means_no_decode_pool():
    out = plan_pools(Scenario(), rate=1.0, prompt_len=100, output_len=100)  # 70B BF16 on one H100
    assert out.decode.gpus is None and out.colocated.gpus is None


@pytest.mark.parametrize("kwargs", [dict(rate=0), dict(output_len=1), dict(prompt_len=0), dict(tpot_target_s=0)])
def test_invalid_input_raises(kwargs):
    args = dict(rate=1.0, prompt_len=100, output_len=100) | kwargs
    with pytest.raises(ValueError):
        plan_pools(Scenario(tp=2), **args)


def test_pipeline_stages_take_prompts_and_sequences_in_turn():
    # Llama-3-70B BF16 on TP = 2 × PP = 2: a prompt crosses both stages (D), but the first stage takes the
    # next prompt after its share s = D/2; B sequences per micro-batch, two micro-batches in flight.
    plan = plan_pools(Scenario(tp=2, pp=2), rate=4.0, prompt_len=2000, output_len=300)
    d = Scenario(tp=2, pp=2, prompt_len=2000).evaluate().ttft_s
    s = d / 2
    wait = TTFT_TARGET_S - d  # the queue's share of the target
    assert plan.prefill.rate_per_instance == pytest.approx(2 * wait / (s * (2 * wait + s)))
    assert plan.prefill.ttft_s == pytest.approx(TTFT_TARGET_S)
    b = plan.decode.batch
    r = Scenario(tp=2, pp=2, context=2150, batch=b).evaluate()
    assert r.sequences_in_flight == 2 * b
    assert plan.decode.rate_per_instance == pytest.approx(2 * b / (299 * r.tpot_s))
    c = plan.colocated
    rc = Scenario(tp=2, pp=2, context=2150, batch=c.batch).evaluate()
    lam = 2 * c.batch / (299 * rc.tpot_s + 2 * c.batch * s)
    assert c.rate_per_instance == pytest.approx(lam)
    assert c.tpot_s == pytest.approx(rc.tpot_s / (1 - lam * s))
    assert c.ttft_s == pytest.approx(d - s + md1_ttft(lam, s) + rc.verify_step_time_s / 2)


def test_expert_parallel_groups_each_serve_their_own_requests():
    # Qwen3-30B-A3B on EP = 2: two groups, each its own prompts and its own B; the arrivals split in two.
    plan = plan_pools(Scenario(model="qwen3-30b-a3b", ep=2), rate=4.0, prompt_len=2000, output_len=300)
    d = Scenario(model="qwen3-30b-a3b", ep=2, prompt_len=2000).evaluate().ttft_s
    assert plan.prefill.rate_per_instance == pytest.approx(2 * md1_max_rate(TTFT_TARGET_S, d))
    b = plan.decode.batch
    r = Scenario(model="qwen3-30b-a3b", ep=2, context=2150, batch=b).evaluate()
    assert r.sequences_in_flight == 2 * b
    assert plan.decode.rate_per_instance == pytest.approx(2 * b / (299 * r.tpot_s))
    assert plan.colocated.rate_per_instance == pytest.approx(
        2 * plan.colocated.batch / (299 * Scenario(model="qwen3-30b-a3b", ep=2, context=2150,
                                                   batch=plan.colocated.batch).evaluate().tpot_s
                                    + plan.colocated.batch * d))
