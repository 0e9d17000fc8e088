"""Static against continuous batching (core.batching): a hand-computed stream, the lab's own steps,
ShareGPT's means, determinism and conservation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.batching import (
    MAX_NUM_SEQS,
    SHAREGPT,
    LengthMix,
    Requests,
    StepTable,
    compare_batching,
    draw_requests,
    mean_held_context,
    simulate,
    step_table,
)
from core.scenario import Scenario

# A hand-made engine: a decode step takes 10 ms at B = 1 and 15 ms at B = 2; a 10-token prompt's
# prefill takes 50 ms.
TABLE = StepTable(decode_step_s=np.array([0.0, 0.010, 0.015]), intensity_weights=np.array([0.0, 1.0, 2.0]),
                  intensity_with_kv=np.array([0.0, 0.9, 1.8]), context=12, ridge_point=295.0,
                  prompts=np.array([10]), prefill_s=np.array([0.050]), result=None)
# Four requests waiting at t = 0, outputs 2, 8, 8, 8 tokens.
FOUR = Requests(prompt=np.array([10, 10, 10, 10]), output=np.array([2, 8, 8, 8]), arrival=np.zeros(4))


def test_static_batching_hand_computed():
    run = simulate(FOUR, TABLE, "static", slots=2)
    # batch {0, 1}: prefill (B = 2), one decode step with both, six with request 1 alone; batch {2, 3}:
    # prefill, seven decode steps with both.
    assert run.step_batch.tolist() == [2, 2, 1, 1, 1, 1, 1, 1] + [2] * 8
    assert run.first_token_s == pytest.approx([0.100, 0.100, 0.275, 0.275])
    assert run.finish_s == pytest.approx([0.115, 0.175, 0.380, 0.380])
    assert run.makespan_s == pytest.approx(0.380)
    assert run.sustained_batch == pytest.approx(12 / 9)  # the steps up to the second batch's prefill
    assert run.tpot_s == pytest.approx([0.015, 0.075 / 7, 0.105 / 7, 0.105 / 7])


def test_continuous_batching_hand_computed():
    run = simulate(FOUR, TABLE, "continuous", slots=2)
    # request 0 leaves after step 1; request 2 joins at step 2 (its prefill beside request 1's decode),
    # request 3 at step 8 when request 1 has left: the batch stays at 2 until nothing is left to admit.
    assert run.step_batch.tolist() == [2] * 10 + [1] * 6
    assert run.step_time_s.tolist() == pytest.approx([0.1, 0.015, 0.06] + [0.015] * 5 + [0.06, 0.015]
                                                     + [0.010] * 6)
    assert run.first_token_s == pytest.approx([0.100, 0.100, 0.175, 0.310])
    assert run.finish_s == pytest.approx([0.115, 0.250, 0.325, 0.385])
    assert run.sustained_batch == 2.0
    assert run.ttft_s.mean() == pytest.approx((0.1 + 0.1 + 0.175 + 0.31) / 4)


def test_both_serve_every_requested_token():
    for policy in ("static", "continuous"):
        run = simulate(FOUR, TABLE, policy, slots=2)
        assert run.output_tokens == FOUR.output.sum() == 26
        assert run.step_intensity.tolist() == TABLE.intensity_weights[run.step_batch].tolist()


def test_idle_engine_waits_for_the_next_arrival():
    late = Requests(prompt=np.array([10, 10]), output=np.array([3, 3]), arrival=np.array([0.0, 1.0]))
    run = simulate(late, TABLE, "continuous", slots=2)
    assert run.first_token_s == pytest.approx([0.05, 1.05])
    assert run.finish_s == pytest.approx([0.07, 1.07])
    assert run.ttft_s == pytest.approx([0.05, 0.05])


def test_static_engine_idle_until_an_arrival_admits_it():
    # 0.04757956 + (0.12312398 - 0.04757956) rounds below 0.12312398: the engine must still admit it.
    req = Requests(prompt=np.array([10, 10]), output=np.array([1, 1]), arrival=np.array([0.04727956, 0.12312398]))
    run = simulate(req, TABLE, "static", slots=1)
    assert run.step_batch.tolist() == [1, 1]
    assert run.first_token_s == pytest.approx([0.09727956, 0.17312398])


@pytest.fixture(scope="module")
def article():
    """The article's 70B at batch 1 on two H100s (TP = 2: the smallest split that fits)."""
    return Scenario(tp=2)


def test_step_table_is_the_labs_own_step(article):
    req = draw_requests(SHAREGPT, 200, seed=3, max_len=8192)
    table = step_table(article, req, slots=12)
    held = round(mean_held_context(req.prompt, req.output))
    assert table.context == held
    for b in (1, 5, 12):
        r = article.clone(batch=b, context=held).evaluate()
        assert table.decode_step_s[b] == pytest.approx(r.step_time_s_with_kv, rel=1e-12)
        assert table.intensity_weights[b] == r.arithmetic_intensity_weights == 2 * b * 1 / 2
    for p in (int(req.prompt.min()), int(np.sort(req.prompt)[100]), int(req.prompt.max())):
        assert table.prefill_time(p) == pytest.approx(article.clone(prompt_len=p).evaluate().ttft_s, rel=1e-12)


def test_step_table_prefill_across_pipeline_stages():
    two_stages = Scenario(tp=2, pp=2)
    req = draw_requests(LengthMix.fixed(700, 50), 3, seed=0, max_len=8192)
    table = step_table(two_stages, req, slots=4)
    assert table.prefill_time(700) == pytest.approx(two_stages.clone(prompt_len=700).evaluate().ttft_s, rel=1e-12)


def test_sharegpt_means_are_the_vllm_papers():
    # Kwon et al. 2023, Fig. 11a: input mean 161.31, output mean 337.99 tokens.
    req = draw_requests(SHAREGPT, 200_000, seed=1, max_len=2**21)
    assert req.prompt.mean() == pytest.approx(161.31, rel=0.02)
    assert req.output.mean() == pytest.approx(337.99, rel=0.02)
    assert np.median(req.output) < 0.7 * req.output.mean()  # right-skewed, as the figure draws it


def test_continuous_keeps_the_batch_full_and_static_does_not(article):
    c = compare_batching(article, n_requests=300, seed=0)
    # what fits when each sequence reserves S = 8,192 tokens beside 2 GPUs' weights: 9 (one GPU's share)
    assert c.static.slots == c.continuous.slots == article.evaluate().max_batch == 9
    assert c.continuous.sustained_batch == 9.0
    assert c.static.sustained_batch < 0.5 * 9  # sequences finish at different times
    assert c.continuous.tokens_per_s > 2 * c.static.tokens_per_s
    assert c.continuous.mean_intensity > 2 * c.static.mean_intensity
    assert c.continuous.ttft_s.mean() < c.static.ttft_s.mean()
    out = c.to_json()
    assert out["static"]["output_tokens"] == out["continuous"]["output_tokens"] == int(c.requests.output.sum())


def test_slots_default_is_capped_at_vllms_max_num_seqs():
    c = compare_batching(Scenario(tp=8, weight_dtype="int4"), n_requests=50, seed=0, max_len=2048)
    assert c.continuous.slots == MAX_NUM_SEQS == 256


def test_poisson_arrivals_at_the_rate_asked():
    req = draw_requests(SHAREGPT, 20_000, seed=5, max_len=8192, rate=4.0)
    assert np.all(np.diff(req.arrival) >= 0)
    assert len(req) / req.arrival[-1] == pytest.approx(4.0, rel=0.03)


@pytest.mark.parametrize("bad", [
    lambda: LengthMix("normal", 1, 1, 1, 1),
    lambda: LengthMix.uniform((10, 5), (1, 2)),
    lambda: LengthMix.lognormal(100, 100, 0.0),
    lambda: LengthMix.fixed(0, 5),
    lambda: draw_requests(SHAREGPT, 0, 0, 100),
    lambda: draw_requests(SHAREGPT, 5, 0, 100, rate=0.0),
    lambda: simulate(FOUR, TABLE, "greedy"),
    lambda: simulate(FOUR, TABLE, "static", slots=3),
    lambda: TABLE.prefill_time(11),
])
def test_invalid_input_raises(bad):
    with pytest.raises(ValueError):
        bad()


mixes = st.one_of(
    st.builds(LengthMix.fixed, st.integers(1, 300), st.integers(1, 300)),
    st.builds(LengthMix.uniform, st.tuples(st.integers(1, 50), st.integers(50, 300)),
              st.tuples(st.integers(1, 50), st.integers(50, 300))),
    st.builds(LengthMix.lognormal, st.floats(5, 400), st.floats(5, 400), st.floats(0.1, 1.5)),
)


@settings(max_examples=60, deadline=None)
@given(mix=mixes, n=st.integers(1, 60), seed=st.integers(0, 2**32 - 1), slots=st.integers(1, 2),
       rate=st.one_of(st.none(), st.floats(0.5, 200)), policy=st.sampled_from(["static", "continuous"]))
def test_tokens_served_equal_tokens_requested_and_a_seed_repeats(mix, n, seed, slots, rate, policy):
    req = draw_requests(mix, n, seed, max_len=512, rate=rate)
    again = draw_requests(mix, n, seed, max_len=512, rate=rate)
    assert np.array_equal(req.prompt, again.prompt) and np.array_equal(req.output, again.output)
    assert np.array_equal(req.arrival, again.arrival)
    assert np.all(req.prompt + req.output <= 512) and np.all(req.output >= 1)
    table = StepTable(np.array([0.0, 0.01, 0.015]), np.array([0.0, 1.0, 2.0]), np.array([0.0, 0.9, 1.8]), 100,
                      295.0, np.unique(req.prompt), np.unique(req.prompt) * 1e-4, None)
    run = simulate(req, table, policy, slots)
    assert run.output_tokens == req.output.sum()
    assert np.all((run.step_batch >= 1) & (run.step_batch <= slots))
    assert np.all(run.first_token_s >= run.arrival_s) and np.all(run.finish_s >= run.first_token_s)
    assert np.all(np.diff(run.step_end_s) > 0)
    rerun = simulate(again, table, policy, slots)
    assert np.array_equal(run.step_batch, rerun.step_batch) and np.array_equal(run.finish_s, rerun.finish_s)


def test_pipeline_micro_batches_and_expert_groups_are_lanes():
    """An engineer's trial: on PP = 2, EP = 2 the Serving tab simulated one micro-batch of one group (256 slots at
    15.29 ms: at most 16,743 tokens/s, where explain's 1,024 sequences in flight give 67,504). Each of PP · EP lanes
    runs B's slots; a lane's decode step crosses every stage (the lab's TPOT); the tokens/s count every lane."""
    from core.sweeps import batch_sweep

    s = Scenario(model="qwen3-30b-a3b", tp=2, pp=2, ep=2, context=2048)
    c = compare_batching(s, SHAREGPT, 200, 0)
    t = c.table
    assert t.lanes == 4 and c.static.slots == c.continuous.slots == min(c.fit, 256)
    stage = batch_sweep(t.result, np.arange(1, t.slots + 1)).step_time_s_with_kv
    assert np.allclose(t.decode_step_s[1:], 2 * stage, rtol=1e-12)
    run = c.continuous
    assert run.tokens_per_s == pytest.approx(4 * run.output_tokens / run.makespan_s, rel=1e-12)
    assert c.fit > 256 and c.slots_text() == (f"256 slots (vLLM's max_num_seqs; {c.fit:,} fit at S = 2,048) in each "
                                              "of 4 lanes, PP = 2 micro-batches × EP = 2 groups")
    # A rate is the whole copy's: each lane draws a quarter of it.
    lone = compare_batching(s, SHAREGPT, 200, 0, rate=8.0)
    assert lone.requests.arrival[-1] == pytest.approx(
        compare_batching(s.clone(pp=1, ep=1), SHAREGPT, 200, 0, rate=2.0).requests.arrival[-1])
