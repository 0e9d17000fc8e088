"""``python -m core ladder|batching|paging|disaggregation|context-parallel|training-memory``: strict JSON with the
models' numbers, text, and one-line errors."""

import json
import re
from pathlib import Path

import pytest

from core.cli import main
from core.model_catalogue import get_model
from core.scenario import Scenario


def run_json(capsys, *args):
    assert main([*args, "--json"]) == 0
    text = capsys.readouterr().out
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))


def test_ladder_json(capsys):
    out = run_json(capsys, "ladder")
    assert [s["rung"] for s in out["steps"]][:3] == [None, "continuous_batching", "weight_quantization"]
    assert [s["numbers"]["batch"] for s in out["steps"]] == [1, 9, 48, 48, 48, 256, 256, 256]
    assert out["start"]["tp"] == 2 and out["steps"][-1]["levers"]["weight_dtype"] == "int4"
    # Where k = 4 no longer pays (B = 256, compute-bound), the same step at k = 1, in the JSON and once in the text.
    assert [s["without_speculation"] is not None for s in out["steps"]] == [False] * 5 + [True] * 3
    assert round(out["steps"][5]["without_speculation"]["tokens_per_s_per_gpu"], 1) == 6123.8
    assert main(["ladder"]) == 0
    text = capsys.readouterr().out
    assert text.count("compute-bound, k = 4 costs: a verify takes 3.86 × the k = 1 step") == 1
    assert text.index("fit 48 → 681") < text.index("k = 4 costs") < text.index("FlashAttention")


def test_ladder_flags_and_rungs(capsys):
    out = run_json(capsys, "ladder", "--rungs", "weight_quantization", "--to-weight-dtype", "int8", "--requests", "100")
    assert [s["numbers"]["p"] for s in out["steps"]] == [2, 1]
    out = run_json(capsys, "ladder", "--rungs", "", "--tp", "8", "--requests", "100")
    assert len(out["steps"]) == 1 and out["start"]["tp"] == 8


def test_batching_json(capsys):
    out = run_json(capsys, "batching", "--tp", "2", "--requests", "1000", "--seed", "0")
    assert out["static"]["output_tokens"] == out["continuous"]["output_tokens"]
    assert out["continuous"]["sustained_batch"] == 9.0 and out["static"]["sustained_batch"] < 4.5
    assert out["mix"]["source"].startswith("ShareGPT lengths, Kwon et al.")
    steps = run_json(capsys, "batching", "--tp", "2", "--requests", "20", "--mix", "fixed", "--prompt", "100",
                     "--output", "10", "--steps")
    assert sum(steps["static"]["step_batch"]) == 20 * 10


def test_paging_json(capsys):
    out = run_json(capsys, "paging", "--tp", "2", "--max-len", "2048")
    pol = out["policies"]
    assert 0.6 <= pol["contiguous"]["waste_fraction"] <= 0.8 and pol["paged"]["waste_fraction"] < 0.04
    assert pol["paged"]["fit"] > 3 * pol["contiguous"]["fit"]


def test_disaggregation_json(capsys):
    out = run_json(capsys, "disaggregation", "--tp", "2", "--prompt-len", "2000", "--output", "300", "--rate", "4")
    assert out["prefill"]["intensity"] == 2000 and out["decode"]["batch"] == 34
    assert out["decode"]["intensity"] < out["ridge_point"] < out["prefill"]["intensity"]


def test_context_parallel_json(capsys):
    out = run_json(capsys, "context-parallel", "--tp", "2", "--no-gqa", "--context", "100000", "--hosts", "16,32,64")
    assert out["hosts_hidden"] == 45 and out["hidden"] == [True, True, False]


def test_context_parallel_keeps_the_split_given_whatever_the_context(capsys):
    """A ring splits one sequence: ``--tp 2 --context 1000000`` is a ring of 2-GPU hosts (the ladder's start had grown
    the host to 8 GPUs, the split that holds the whole million tokens, and said nothing)."""
    out = run_json(capsys, "context-parallel", "--tp", "2", "--context", "1000000")
    assert out["gpus_per_host"] == 2 and out["start_note"] == "" and out["max_context"][0] == 73_080
    out = run_json(capsys, "context-parallel", "--context", "1000000")
    assert out["gpus_per_host"] == 2
    assert out["start_note"] == ("The weights do not fit at TP = 1: a host is TP = 2, the smallest split that holds "
                                 "them.")
    assert main(["context-parallel", "--context", "1000000"]) == 0
    assert capsys.readouterr().out.startswith("The weights do not fit at TP = 1: a host is TP = 2")


def test_training_memory_json_and_text(capsys):
    out = run_json(capsys, "training-memory", "--model", "llama-3-70b", "--dp", "64", "--stages", "4",
                   "--microbatches", "4,12")
    n = get_model("llama-3-70b").n_params
    assert out["zero"][0]["total_bytes"] == 16 * n and out["zero"][3]["reduction"] == 64
    assert out["pipeline"]["bubble"] == pytest.approx([3 / 7, 3 / 15])
    assert main(["training-memory"]) == 0
    assert "stage 3" in capsys.readouterr().out


def test_training_memory_reads_the_gpu_and_says_which_flags_it_does_not_read(capsys):
    """A trial: ``--gpu``, ``--tp`` and ``--batch`` were taken and changed nothing, without a word.  Each stage is now
    against one GPU's capacity, as the Serving tab's table (red there: over), and the levers ZeRO does not read are
    named on stderr."""
    out = run_json(capsys, "training-memory", "--gpu", "h200", "--model", "llama-3-8b")
    assert out["gpu"] == "h200" and out["capacity_bytes"] == 141 * 2**30  # the default convention: "141 GB" as GiB
    assert [z["over_capacity"] for z in out["zero"]] == [False] * 4  # stage 0: 16 × 8.03B = 128.5 GB < 151.4 GB
    assert main(["training-memory", "--gpu", "h200", "--tp", "4", "--batch", "8"]) == 0
    got = capsys.readouterr()
    assert got.err == ("warning: training-memory does not read --batch, --tp: ZeRO's memory per GPU is the model's "
                       "over --dp, against one --gpu's capacity\n")
    assert "against one NVIDIA H200 SXM 141GB's 141.0 GiB (151.4 GB), before activations:" in got.out
    assert "= 1,128.86 GB (1.00× less, communication 1×): over one GPU" in got.out
    assert "= 17.64 GB (64.00× less, communication 1.5×): fits one GPU" in got.out
    # --capacity is read (H200's "141 GB" as 10^9 bytes), not warned of; an ignored lever is named by its flag
    assert main(["training-memory", "--gpu", "h200", "--capacity", "decimal", "--no-gqa", "--reserve", "5"]) == 0
    got = capsys.readouterr()
    assert got.err.startswith("warning: training-memory does not read --no-gqa, --reserve: ")
    assert "against one NVIDIA H200 SXM 141GB's 131.3 GiB (141.0 GB)" in got.out


@pytest.mark.parametrize("args, message", [
    (["ladder", "--rungs", "warp_drive"], "unknown rung 'warp_drive'"),
    (["batching", "--mix", "fixed"], "--mix fixed needs --prompt and --output"),
    (["batching", "--mix", "uniform", "--prompt", "5", "--output", "1:9"], "a uniform range is LOW:HIGH"),
    (["paging", "--tp", "0"], "--tp='0' is not a whole number"),
    (["context-parallel", "--hosts", "a,b"], "--hosts 'a,b': whole numbers"),
    (["disaggregation", "--output", "1"], "--output: 1: out of range; accepted: a whole number of tokens from 2"),
    # A trial's: tracebacks on inf and NaN, a minute on 100,000,000 requests, absurd figures on the rest.
    (["disaggregation", "--rate", "inf"], "--rate: inf: out of range; accepted: a number of requests per second"),
    (["ladder", "--rate", "1e308"], "--rate: 1e308: out of range"),
    (["batching", "--mix", "lognormal", "--prompt", "100", "--output", "100", "--sigma", "nan"],
     "--sigma: nan: out of range; accepted: a number above 0, at most 10"),
    (["batching", "--requests", "100000000"], "--requests: 100000000: out of range; accepted: a whole number from 1 to "
                                              "100,000"),
    (["context-parallel", "--hosts", "999999999"], "--hosts '999999999': each from 1 to 65,536"),
    (["paging", "--block-size", "99999999"], "--block-size: 99999999: out of range"),
    (["batching", "--max-len", "0"], "--max-len: 0: out of range"),
    (["ladder", "--to-spec-k", "999"], "--to-spec-k: 999: out of range; accepted: a whole number from 1 to 64"),
    # ASCII digits only, as the lever flags (an attacker's trial: "２", "٤" and "1_0" had been read as numbers),
    # and N_d bounded (10^30 had printed "999,999,999,999,999,879,147,136,483,328.00× less").
    (["context-parallel", "--hosts", "２"], "--hosts '２': whole numbers separated by commas"),
    (["context-parallel", "--hosts", "1_0"], "--hosts '1_0': whole numbers separated by commas"),
    (["training-memory", "--dp", "６４"], "--dp: '６４': accepted: a whole number from 1 to 1,048,576"),
    (["batching", "--requests", "1_000"], "--requests: '1_000': accepted: a whole number from 1 to 100,000"),
    (["disaggregation", "--rate", "٤"], "--rate: '٤': accepted: a number of requests per second"),
    (["training-memory", "--dp", "1" + "0" * 30], "--dp: 10000000000000000000…: out of range; accepted: a whole "
                                                  "number from 1 to 1,048,576"),
    # A mix's flags without --mix had been ignored, silently.
    (["batching", "--prompt", "-1"], "--prompt sets a request mix of your own: add --mix fixed, uniform or lognormal"),
    (["paging", "--output", "0", "--sigma", "2"], "--output, --sigma set a request mix of your own"),
    (["batching", "--mix", "fixed", "--prompt", "9", "--output", "9", "--sigma", "2"],
     "--sigma shapes a lognormal mix, not --mix fixed"),
])
def test_errors_are_one_line(capsys, args, message):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_the_command_line_starts_where_the_tabs_do_and_says_so(capsys):
    """A trial: ``python -m core ladder --model qwen3-30b-a3b --batch 16`` climbed at article 004's TP = 2 (1,183.2
    tokens/s per GPU, where the tab gives 1,297 on the one GPU it fits), and ``batching --tp 2 --batch 64`` planned
    9 slots where the Serving tab starts at TP = 4 (70 slots): neither said at which split it ran."""
    from app.ladder_view import ladder_rows
    from core.ladder import climb
    from core.scenario import Scenario

    out = run_json(capsys, "ladder", "--model", "qwen3-30b-a3b", "--batch", "16")
    tab = ladder_rows(climb(Scenario(model="qwen3-30b-a3b", batch=16)))
    assert out["start"]["tp"] == 1 and out["start_note"] == ""
    assert [round(s["numbers"]["tokens_per_s_per_gpu"], 1) for s in out["steps"]] == [
        round(row["tokens_per_s_per_gpu"], 1) for row in tab]
    assert main(["ladder", "--model", "qwen3-30b-a3b", "--batch", "16"]) == 0
    text = capsys.readouterr().out
    assert "(TP = 1)" in text.splitlines()[0] and "I = 2·B·k·N_active / (N_read·p) on the weights" in text
    assert re.search(r"   2\.655 +memory ", text)  # the tab's intensity, not "3"
    assert main(["batching", "--tp", "2", "--batch", "64"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("The scenario does not fit at TP = 2 (weights and KV cache at B = 64): it starts at TP = 4")
    assert ", 70 slots (what fits at S = 8,192)," in text


def test_disaggregation_reads_what_the_serving_tab_reads_whatever_the_context_flag(capsys):
    """An engineer's trial: --context 4096 decoded at 4,096 tokens (121.6 req/s) where the Serving tab, for the same
    scenario, read P + O/2 = 2,150 (163.2 req/s), and the verdict flipped between the two."""
    from app.serving_system import pools_html
    from core.disaggregation import OUTPUT_LEN, RATE

    flags = ["--model", "qwen3-30b-a3b", "--tp", "2", "--pp", "2", "--context", "4096"]
    out = run_json(capsys, "disaggregation", *flags, "--rate", str(RATE), "--output", str(OUTPUT_LEN))
    assert out["context"] == 2000 + OUTPUT_LEN // 2
    html = pools_html(Scenario(model="qwen3-30b-a3b", tp=2, pp=2, context=4096), None, 16)
    assert f"<td>{out['decode']['rate_per_instance']:.3f}</td>" in html


def test_the_ladders_text_names_the_first_ridge_where_the_quantisation_rung_moves_the_roof(capsys):
    # A trial: gpt-oss as stored on a B200 starts on its FP4 + BF16 mix (620.5 FLOP/byte) and the quantisation rung
    # takes it to INT4's BF16 roof (281.2); the text printed only "ridge point 281" where the tab dashes both.
    main(["ladder", "--model", "gpt-oss-120b", "--gpu", "b200", "--weight-dtype", "stored"])
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith(
        "ridge point 281 FLOP/byte at the last rung (621 at the start); I = 2·B·k·N_active / (N_read·p) on the "
        "weights;")
    main(["ladder"])
    assert "ridge point 295 FLOP/byte; I = 2·B·k/p on the weights" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["ladder", "batching", "paging", "disaggregation", "context-parallel",
                                     "training-memory"])
def test_every_serving_command_reads_a_config(command, capsys, tmp_path):
    """``--config FILE`` as ``explain`` takes it (the page's Bring your own climbs its model on the Ladder tab; an
    engineer's trial found these commands refused the flag), approximate where the config has keys not modelled."""
    case = json.loads((Path(__file__).parents[1] / "field_cases" / "hybrid-linear-attention.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps(case["input"]["config"]))
    out = run_json(capsys, command, "--config", str(path))
    assert "Approximate: " in out["start_note"] and "vision_config" in out["start_note"]
    assert main([command, "--config", str(path)]) == 0
    assert "Approximate: " in capsys.readouterr().out
    if command == "training-memory":
        assert out["model"].startswith("config-")


def test_a_ladder_that_fits_no_sequence_prints_the_quotes_without_a_ratio(capsys, tmp_path):
    """An attacker's trial: a model no split holds had the ladder divide by its start's 0.0 tokens/s (a traceback)."""
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({"num_hidden_layers": 2048, "hidden_size": 65536, "num_attention_heads": 512,
                                "num_key_value_heads": 8, "intermediate_size": 262144, "vocab_size": 32000}))
    out = run_json(capsys, "ladder", "--config", str(path))
    notes = {step["rung"]: step["article"] for step in out["steps"]}
    assert notes["weight_quantization"] == 'Article 004 reports: "GPTQ reports ~3.25× end-to-end on A100; AWQ ~3.2×."'
    gqa = next(step["summary"] for step in out["steps"] if step["rung"] == "gqa_mla")
    assert gqa.endswith("less KV per token; no sequence fits with it or without it")  # not "0 would fit, not 0"


def test_a_stream_too_long_to_simulate_is_refused_before_numpy_is_asked_for_it(capsys):
    """An attacker's trial: 1,000 requests of 2,097,152 output tokens, each flag in range, had the batching run ask
    numpy for 7.8 GiB (a traceback), and with --requests 100000 all of the machine's memory."""
    assert main(["batching", "--model", "llama-3-8b", "--tp", "8", "--mix", "fixed", "--prompt", "1", "--output",
                 "2097152", "--context", "2097152"]) == 2
    err = capsys.readouterr().err
    assert err == ("error: the stream takes 1,048,575,500 decode steps static, more than the 16,000,000 simulated: "
                   "fewer requests or shorter outputs\n")


def test_batching_says_how_many_requests_the_maximum_length_cut(capsys):
    """An attacker's trial: 100,000-token prompts ran as 8,191 under a header that said "prompt 100000", unsaid."""
    assert main(["batching", "--model", "llama-3-8b", "--mix", "fixed", "--prompt", "100000", "--output", "2"]) == 0
    assert ("  1,000 of 1,000 requests reach the maximum length 8,192 (P + O = max_len): the mix's longer ones are cut "
            "to it") in capsys.readouterr().out.split("\n")
    assert run_json(capsys, "batching", "--model", "llama-3-8b")["requests_at_max_len"] == 0  # ShareGPT at 8,192
    from app.serving_system import batching_html
    from core.batching import SHAREGPT
    html = batching_html(Scenario(model="llama-3-8b", context=512), SHAREGPT, 16)
    assert "325 of them reach the maximum length S = 512 (P + O = S): the mix's longer ones are cut to it." in html


def test_the_ladders_text_words_a_rungs_bound_as_the_tab_does(capsys):
    """An engineer's trial: ``ladder --model llama-3-8b --batch 64 --context 2048`` printed "1,024 memory" on the
    quantisation rung beside "ridge point 295", where the tab says "memory, by KV reads"
    (core.explain.rung_bound_word)."""
    from app.ladder_view import ladder_table_html
    from core.ladder import climb
    from core.scenario import Scenario

    assert main(["ladder", "--model", "llama-3-8b", "--batch", "64", "--context", "2048"]) == 0
    text = capsys.readouterr().out
    row = next(line for line in text.splitlines() if line.startswith("Weight quantization"))
    assert re.search(r" 1,024 memory, by KV reads +159\.8 ", row), row
    html = ladder_table_html(climb(Scenario(model="llama-3-8b", batch=64, context=2048)))
    # one rung's, and the key under the table that says what it means
    assert html.count("memory, by KV reads") == text.count("memory, by KV reads") == 2
