"""``python -m core``: the explain walk-through, its JSON, and one-line errors."""

import json
import re
import subprocess
import sys

import pytest

from core.cli import CUSTOM_GPU_FLAGS, main
from core.model_catalogue import CATALOGUE_DIR


def run_json(capsys, *args):
    assert main(["explain", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_llama3_8b_batch_56_walkthrough_json(capsys):
    out = run_json(capsys, "--model", "llama-3-8b", "--gpu", "h100-sxm", "--batch", "56", "--context", "8192")
    assert round(out["weight_bytes_read"] / 1e9, 1) == 16.1
    assert round(out["kv_bytes"] / 1e9, 1) == 60.1
    assert round(out["step_time_s_with_kv"] * 1e3, 1) == 22.7
    assert out["tokens_per_s_with_kv"] == pytest.approx(2470, rel=0.005)
    assert out["arithmetic_intensity_weights"] == 56
    assert out["bound"] == "memory"
    assert out["kv_bytes_per_token"] == 131072
    assert out["fits"] is True


def test_llama3_70b_defaults_json(capsys):
    out = run_json(capsys)
    assert out["arithmetic_intensity_weights"] == 1
    assert round(out["ridge_point"]) == 295
    assert round(out["attainable_flop_per_s_weights"] / 1e12, 1) == 3.4
    assert round(out["peak_fraction_weights"] * 100, 2) == 0.34
    assert out["kv_bytes_per_token"] == 327680


def test_article_capacity_reading(capsys):
    out = run_json(capsys, "--model", "llama-3-8b", "--capacity", "decimal", "--reserve", "0")
    assert out["max_batch"] == 59


def test_explain_text_shows_each_step(capsys):
    assert main(["explain", "--model", "llama-3-8b", "--batch", "56"]) == 0
    text = capsys.readouterr().out
    assert "I = 2·B·k / p = 2 × 56 × 1 / 2 bytes = 56 FLOP/byte" in text
    assert "131,072 bytes (128 KiB)" in text
    assert "76.19 GB" in text
    assert "22.74 ms" in text
    # The roofline's times are the least a step can take, said as its tokens/s say "ceiling" (a teacher's trial:
    # "291 ms time to first token" read as what one prompt takes).
    assert "\n  Step time (at best): max(FLOP/P_peak, bytes/BW, t_launch)" in text
    assert "\n  Time to first token (one prompt, at best): " in text
    assert "\n  Time per output token (at best): " in text


def test_the_communication_says_what_each_kind_sends(capsys):
    # An engineer's trial: Mixtral at TP = EP = 2 printed "3,145,728 bytes, 128 calls"; the 64 all-reduces account for
    # 2,097,152, and the all-to-alls' 1,048,576 had no formula. B·k·h·a = 4 × 1 × 4,096 × 2 = 32,768 bytes.
    assert main(["explain", "--model", "mixtral-8x7b", "--batch", "4", "--tp", "2", "--ep", "2"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("Communication per step"))
    tp = 2 * 32 * 2 * (2 - 1) / 2 * 32_768  # two all-reduces a layer, ring: 2,097,152
    ep = 2 * 32 * 2 * 32_768 * (2 - 1) / 2 / 2  # dispatch and combine, k_e = 2, the other group's half, TP slices
    assert (tp, ep) == (2_097_152, 1_048_576)
    assert ("= 2 × 32 × 2 × (2 − 1)/2 × 32,768 bytes (TP: two all-reduces a layer) + 2 × 32 × 2 × 32,768 bytes × "
            "(2 − 1)/2 / 2 (EP: dispatch and combine a MoE layer") in line
    assert f"= {tp + ep:,.0f} bytes; {tp + ep:,.0f} bytes / 0.45 TB/s + 128 × 6 µs = 0.775 ms" in line
    # One kind alone: its formula is the all-reduce readout's; no sum is printed.
    assert main(["explain", "--tp", "2"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("Communication per step"))
    assert "(TP: two all-reduces a layer)" not in line


@pytest.mark.parametrize(
    "args, message",
    [
        (["--gpu", "h900"], "--gpu='h900' is not one of v100, a100-40gb"),
        (["--model", "gpt-5"], "--model='gpt-5' is not one of llama-2-7b"),
        (["--batch", "0"], "--batch='0' is not a whole number from 1 to 65,536"),
        (["--spec-k", "-3"], "--spec-k='-3' is not a whole number from 1 to 64"),
        (["--context", "0"], "--context='0' is not a whole number from 1 to 2,097,152"),
        (["--weight-dtype", "int3"], "--weight-dtype='int3' is not one of fp32, bf16"),
        (["--reserve", "-1"], "--reserve='-1' is not a number from 0 to 1,024 GiB"),
        (["--reserve", "1e300"], "--reserve='1e300' is not a number from 0 to 1,024 GiB"),
        (["--acceptance", "1.5"], "--acceptance='1.5' is not a number from 0 to 1"),
        (["--batch", "lots"], "--batch='lots' is not a whole number from 1 to 65,536"),
        (["--batch", "nan"], "--batch='nan' is not a whole number"),
        (["--batch", "1" * 5000], "--batch='11111111111111111111'… is 5,000 characters long"),
        # A repeated flag used to keep its last value silently (a link keeps its first, with a notice).
        (["--batch", "4", "--batch", "8"], "--batch given twice ('4' and '8'): give it once"),
        (["--weight-dtype", "int4", "--model", "llama-3-8b", "--weight-dtype", "fp8"],
         "--weight-dtype given twice ('int4' and 'fp8')"),
    ],
)
def test_bad_input_is_one_line_naming_the_value(capsys, args, message):
    assert main(["explain", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert message in err


def test_a_flag_repeated_with_the_same_value_is_one_value(capsys):
    assert run_json(capsys, "--batch", "8", "--batch", "8")["batch"] == 8


def test_module_entry_point():
    proc = subprocess.run([sys.executable, "-m", "core", "explain", "--json"], capture_output=True, text=True,
                          check=True)
    assert json.loads(proc.stdout)["gpu"] == "h100-sxm"


def test_ids_are_case_insensitive(capsys):
    out = run_json(capsys, "--weight-dtype", "INT4", "--gpu", "H200")
    assert out["weight_dtype"] == "int4" and out["gpu"] == "h200"


def test_numbers_never_print_in_e_notation(capsys):
    assert main(["explain", "--model", "llama-3.1-405b", "--gpu", "l4", "--batch", "1024", "--context", "131072",
                 "--no-gqa", "--weight-dtype", "fp32", "--phase", "prefill", "--prompt-len", "32000"]) == 0
    text = capsys.readouterr().out
    assert "e+" not in text
    assert "k (prompt length) = 32,000" in text


def test_config_file_is_read_and_reported(tmp_path, capsys):
    cfg = tmp_path / "gpt2.json"
    cfg.write_text('{"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "n_positions": 1024, '
                   '"vocab_size": 50257}')
    out = run_json(capsys, "--config", str(cfg), "--batch", "8")
    assert out["n_params"] == 124_439_808
    assert out["model_read"]["config key names"] == "GPT-2-style (n_layer, n_embd, …)"
    assert out["assumptions"] == ["n_inner absent: 4 × n_embd"]


def test_broken_config_file_is_one_line(tmp_path, capsys):
    cfg = tmp_path / "bad.json"
    cfg.write_text('{"num_hidden_layers": 2, "hidden_size": 8, "num_attention_heads": -2}')
    assert main(["explain", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'num_attention_heads' must be a positive integer, got -2" in err


def test_app_export_errors_are_one_line(tmp_path, capsys):
    from app.__main__ import main as app_main

    assert app_main(["export", "--out", str(tmp_path / "no" / "such" / "dir" / "x.html")]) == 2
    assert "No such file or directory" in capsys.readouterr().err
    assert app_main(["export", "--phase", "prefill", "--out", str(tmp_path / "x.html")]) == 2
    assert "decode only" in capsys.readouterr().err
    assert app_main(["export", "--out", str(tmp_path / "x.html"), "--model", "mixtral-8x7b"]) == 0
    assert (tmp_path / "x.html").stat().st_size < 3e6


@pytest.mark.parametrize("price", ["1e-300", "5e-324"])
def test_a_tiny_price_per_gpu_hour_is_one_short_figure(capsys, price):
    """Issue 31, F8: ``--gpu-hour-price 1e-300`` printed a 303-character cost, ``5e-324`` "set a price" (the
    cost underflowed to 0 although a price was given)."""
    assert main(["explain", "--gpu-hour-price", price]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "Cost per million" in line]
    assert len(lines) == 2
    for line in lines:
        assert "set a price" not in line and max(map(len, re.findall(r"[\d.,e+-]{2,}", line))) < 12  # no long figure
        assert re.search(r"= under \$0\.0001 × 1 / 3600 / [\d.,]+ tokens/s × 1e6 = under \$0\.0001 \(under "
                         r"\$0\.0001 per GPU-hour", line), line


def test_money_has_one_format_in_the_explanation_and_the_readouts(capsys):
    from core import Scenario
    from core.explain import quantities

    r = Scenario(gpu_hour_price=1e6).evaluate()
    assert main(["explain", "--gpu-hour-price", "1e6"]) == 0
    text = capsys.readouterr().out
    assert "e+" not in text and "$1,000,000.00 × 1 / 3600" in text
    # 70B on one H100 does not fit: "(if it fit)", as its tokens/s
    assert quantities(r)["cost-output"].value == f"${r.cost_per_million_output_tokens:,.2f} (if it fit)"
    assert quantities(Scenario().evaluate())["cost-output"].value == "no price given"


TERMINAL_ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x9b\u202e"  # retitle (OSC … BEL), clear the screen, a C1 CSI, bidi override


def test_text_output_writes_control_characters_as_escapes(tmp_path, capsys):
    """Issue 31, F7: a config's ``quantization_config.quant_method`` or the file's name holding ESC/BEL was written
    raw by ``python -m core explain``, retitling the terminal and clearing the screen."""
    cfg = tmp_path / f"evil{TERMINAL_ESCAPES}.json"
    cfg.write_text(json.dumps({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                               "intermediate_size": 128, "vocab_size": 1000,
                               "quantization_config": {"quant_method": f"{TERMINAL_ESCAPES}gptq", "bits": 4}}))
    assert main(["explain", "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert all(c.isprintable() for c in out.replace("\n", "")), [c for c in out if not c.isprintable()]
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J\\x9b\\u202e on " in out  # said, not run (named as the lab names it)
    assert "quantization: \\x1b]0;pwned\\x07" in out
    assert out.count("\n") > 40  # the lines stay lines


def test_the_offline_page_command_writes_no_control_characters(tmp_path, capsys):
    from app.__main__ import main as app_main

    assert app_main(["export", "--out", str(tmp_path / f"no{TERMINAL_ESCAPES}" / "x.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(c.isprintable() for c in err.rstrip("\n")) and "\\x1b]0;" in err


def test_the_first_line_says_when_the_numbers_are_approximate(capsys):
    assert main(["explain", "--model", "deepseek-v3"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    # A terminal has no Bring your own tab: the note points at the model as read, printed after the derivation.
    assert first.endswith("— APPROXIMATE: num_nextn_predict_layers not modelled (see the model as read, below); "
                          "every number here leaves them out")
    assert "  approximate: num_nextn_predict_layers not modelled\n" in out
    # The verdict is said, approximate (a trial: docs/command-line.md promised "≈ NO", the line ended at the sum).
    assert "  Fits in memory: weights held + KV + reserve ≤ capacity = 1,249.88 + 0.54 + 3.00 = 1,253.42 GiB > " \
        "80.00 GiB → ≈ NO\n" in out
    assert main(["explain", "--model", "llama-3-8b"]) == 0
    out = capsys.readouterr().out
    assert "APPROXIMATE" not in out.splitlines()[0] and "≤ 80.00 GiB → yes\n" in out
    assert main(["explain", "--model", "deepseek-v3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["approximate"] == ["num_nextn_predict_layers"]


def test_a_gpu_not_in_the_catalogue_from_its_datasheet_numbers(capsys):
    # The H20: 96 GB, 4.0 TB/s, 148 TFLOP/s dense BF16: a ridge point of 148e12 / 4.0e12 = 37 FLOP/byte.
    args = ["explain", "--model", "llama-3-8b", "--gpu-name", "H20", "--gpu-bf16", "148", "--gpu-fp8", "296",
            "--gpu-bandwidth", "4.0", "--gpu-memory", "96"]
    assert main(args) == 0
    out = capsys.readouterr()
    assert out.out.startswith("Llama-3-8B on H20: decode")
    assert "Ridge point: P_peak / BW = 148 TFLOP/s / 4 TB/s = 37.0 FLOP/byte" in out.out
    assert "96 GB on the datasheet -> 96.00 GiB" in out.out and out.err == ""
    assert main([*args, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["ridge_point"] == pytest.approx(37.0) and r["peak_flop_per_s"] == 148e12 and r["gpu_warnings"] == []
    assert r["capacity_bytes"] == 96 * 2**30 and r["gpu"] == "custom-h20"
    # Its scale-up link and node are the communication's: TP 2 over 450 GB/s per direction, up to 8 per node.
    assert main([*args, "--gpu-link", "450", "--gpu-node", "8", "--tp", "2", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["link_bandwidth"] == 450e9 and r["communication_time_s"] > 0
    assert "up to 8 accelerators" in r["interconnect"]


def test_custom_gpu_flags_have_the_browser_forms_ranges_and_sparse_warning(capsys):
    base = ["explain", "--gpu-name", "Lab card", "--gpu-bf16", "400", "--gpu-memory", "80"]
    # The same checks as the "Your GPU" form (core.hardware.custom_accelerator over CUSTOM_RANGES), one line each.
    for extra, message in [
        (["--gpu-bandwidth", "0"], "--gpu-bandwidth: bandwidth (TB/s) must be a positive number from 0.001 to 10000, "
                                   "got 0"),
        ([], "--gpu-bandwidth: bandwidth (TB/s) is missing: enter a positive number"),
        (["--gpu-bandwidth", "fast"], "--gpu-bandwidth 'fast': not a number; accepted: 0.001 to 10000"),
        (["--gpu-bandwidth", "2", "--gpu-fp8", "1e9"], "--gpu-fp8: FP8 peak (TFLOP/s) must be a positive number from"),
        (["--gpu-bandwidth", "2", "--gpu-link", "0.5"], "--gpu-link: link (GB/s per direction) must be a positive "
                                                        "number from 1"),
        (["--gpu-bandwidth", "2", "--gpu-node", "2.5"], "--gpu-node: node (GPUs) must be a whole number from 1 to"),
        (["--gpu-bandwidth", "2", "--gpu-memory", "0"], "--gpu-memory: capacity (GB) must be a positive number"),
        (["--gpu-bandwidth", "2", "--gpu-reference", "h999"], "--gpu-reference: unknown reference GPU 'h999'"),
        (["--gpu-bandwidth", "2", "--gpu-name", " "], "--gpu-name: name must be 1 to 60 characters"),
        (["--gpu-bandwidth", "2", "--gpu", "h100-sxm"], "--gpu and --gpu-name: give a catalogue GPU or your own"),
    ]:
        assert main(base + extra) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1, err
    assert main(["explain", "--gpu-bf16", "400"]) == 2
    assert "--gpu-bf16 needs --gpu-name" in capsys.readouterr().err
    # A 2:4-sparsity headline (the H100's 1,979 "TFLOP/s" at its 3.35 TB/s) is warned about, as in the browser.
    assert main(["explain", "--gpu-name", "Fast card", "--gpu-bf16", "1979", "--gpu-bandwidth", "3.35",
                 "--gpu-memory", "80"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: BF16 1,979 TFLOP/s is about twice the dense 989 of NVIDIA H100")


def test_list_verbose_gives_each_gpus_dense_roofs_bandwidth_capacity_and_each_models_size(capsys):
    """Issue 30: an engineer with four configs had only ids from ``list``.  ``--verbose`` prints each GPU's dense
    peaks per precision (never the 2:4-sparsity headline), HBM bandwidth, capacity as printed and as the lab reads
    it, the ridge and the scale-up link; each model's parameters (active, for MoE), layers, KV per token and
    trained context."""
    assert main(["list", "--verbose"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    gpu = {line.split()[0]: line for line in lines if line.split() and line.split()[0] in ("h100-sxm", "a100-80gb",
                                                                                            "tpu-v4", "l4")}
    # H100 SXM5: 989.4 dense BF16 (1,979 is the sparse headline), 1,979 FP8 and INT8, no FP4, 66.9 FP32; 3.35 TB/s;
    # 80 GB read as 80 GiB; 989.4 / 3.35 = 295.3; NVLink 900 GB/s bidirectional = 450 GB/s per direction.
    assert gpu["h100-sxm"].split()[1:9] == ["989.4", "1,979", "1,979", "—", "66.9", "3.35", "295", "80"]
    assert "80 GB HBM3 → 80.00 GiB" in gpu["h100-sxm"] and "450 GB/s" in gpu["h100-sxm"]
    assert gpu["h100-sxm"].endswith("NVIDIA H100 SXM5 80GB")
    assert gpu["a100-80gb"].split()[1:9] == ["312", "—", "624", "—", "19.5", "2.039", "153", "80"]
    assert "32 GiB HBM2 → 32.00 GiB" in gpu["tpu-v4"] and "—" in gpu["tpu-v4"].split("GiB")[-1]  # no per-chip link
    assert "dense" in out and "2:4" in out and "TOP/s" in out  # the header says what the figures are
    # The V100's 125 is FP16 (Volta has no BF16): the column is the 16-bit roof, and the header says whose is FP16.
    assert lines[1].split()[1] == "16-bit" and "16-bit: BF16, or FP16 where a part has no BF16 (v100)" in lines[0]
    model = {line.split()[0]: line for line in lines if line.split() and line.split()[0] in ("llama-3-70b",
                                                                                              "mixtral-8x7b")}
    # Llama-3-70B: 70,553,706,496 parameters, 80 layers, 2·80·8·128·2 bytes = 320 KiB per token, 8,192 trained.
    assert model["llama-3-70b"].split()[1:6] == ["70.55", "—", "80", "320", "8,192"]
    assert model["mixtral-8x7b"].split()[1:6] == ["46.70", "12.88", "32", "128", "32,768"]
    assert model["llama-3-70b"].endswith("Llama-3-70B")
    # Without --verbose: the ids, as before.
    assert main(["list"]) == 0
    assert capsys.readouterr().out.startswith("GPUs:   v100, a100-40gb")


def test_app_export_writes_the_offline_page_of_your_own_config(tmp_path, capsys):
    """Issue 30: ``python -m app export`` took catalogue models only; ``--config FILE`` writes the page of one's own
    config.json, read as ``python -m core explain --config`` reads it (an unreadable one: one line, exit 2)."""
    from app.__main__ import main as app_main
    from core.cli import model_from_file

    config = json.loads((CATALOGUE_DIR / "llama-3-8b.json").read_text())
    config["num_hidden_layers"] = 16  # half of Llama-3-8B: no catalogue model
    path = tmp_path / "half-llama.json"
    path.write_text(json.dumps(config))
    out = tmp_path / "half.html"
    assert app_main(["export", "--config", str(path), "--batch", "8", "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    html = out.read_text()
    model = model_from_file(str(path))
    assert model.n_layers == 16 and 4e9 < model.n_params < 5e9
    assert "Roofline Lab — half-llama on NVIDIA H100 SXM5 80GB" in html  # the name the lab gives the file
    assert f'["n_params",{model.n_params}]' in html  # the page's constants: the file's model
    assert app_main(["export", "--config", str(tmp_path / "missing.json"), "--out", str(out)]) == 2
    assert capsys.readouterr().err.startswith("error: --config ")


@pytest.mark.parametrize("config, file_name, name", [
    ({"_name_or_path": "meta-llama/Llama-3.1-8B"}, "config.json", "Llama-3.1-8B"),  # a download's own name
    ({}, "half-llama.json", "half-llama"),
    ({}, "config.json", "LlamaForCausalLM"),  # a download that names nothing: its class
    ({"architectures": None}, "config.json", "llama"),  # ... or its model_type
    ({"architectures": None, "model_type": None}, "config.json", "Pasted config"),
])
def test_the_cli_the_lab_and_the_offline_page_name_a_config_alike(tmp_path, config, file_name, name):
    """Issue 30: the same config.json was "config.json" or "half-llama.json" on the CLI (the file's name, whatever
    ``_name_or_path`` said), its ``_name_or_path`` or "half-llama" in the lab, and the file's stem on the page; the
    CLI's model id was the file's stem (``config``), the lab's ``config-`` and the name's slug."""
    from app.__main__ import config_text
    from app.byo_view import _read
    from core import Scenario
    from core.cli import model_from_file
    from core.config_reader import config_model_id

    base = json.loads((CATALOGUE_DIR / "llama-3-8b.json").read_text())
    base.pop("_name_or_path", None)
    path = tmp_path / "dir" / file_name
    path.parent.mkdir()
    text = json.dumps({k: v for k, v in {**base, **config}.items() if v is not None})
    path.write_text(text)
    named = (name, config_model_id(name))
    cli = model_from_file(str(path))
    assert (cli.name, cli.id) == named
    lab = _read(text, (file_name, text), Scenario())[1]  # dropped on Bring your own
    assert (lab.name, lab.id) == named
    page_text = config_text(str(path))  # what the offline page's link carries to the lab
    opened = _read(page_text, None, Scenario())[1]
    assert (opened.name, opened.id) == named


def test_the_cli_names_a_downloaded_config_as_the_lab_does(tmp_path, capsys):
    """Issue 30: ``--config some/dir/config.json`` of a download (``_name_or_path`` "meta-llama/Llama-3.1-8B") is
    Llama-3.1-8B, with the lab's model id, in the text and the JSON; the lab reads the same file alike."""
    from app.byo_view import _model_of
    from core.cli import model_from_file

    config = {**json.loads((CATALOGUE_DIR / "llama-3-8b.json").read_text()), "_name_or_path": "meta-llama/Llama-3.1-8B"}
    path = tmp_path / "some" / "dir" / "config.json"
    path.parent.mkdir(parents=True)
    text = json.dumps(config)
    path.write_text(text)
    assert main(["explain", "--config", str(path)]) == 0
    assert capsys.readouterr().out.startswith("Llama-3.1-8B on NVIDIA H100 SXM5 80GB: decode")
    assert run_json(capsys, "--config", str(path))["model"] == "config-llama-3-1-8b"
    cli, lab = model_from_file(str(path)), _model_of(text, "config.json")
    assert (cli.name, cli.id) == (lab.name, lab.id) == ("Llama-3.1-8B", "config-llama-3-1-8b")


def test_a_nameless_config_is_named_after_its_architecture_everywhere(tmp_path, capsys):
    """Issue 30: a config.json without ``_name_or_path`` was "config.json" on the CLI and "Pasted config" pasted in
    the lab; both now name it after ``architectures[0]``, and the offline page too."""
    from app.__main__ import main as app_main
    from app.byo_view import _model_of
    from core.cli import model_from_file

    config = {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "num_hidden_layers": 2,
              "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
              "vocab_size": 1000}
    path = tmp_path / "config.json"
    text = json.dumps(config)
    path.write_text(text)
    pasted, dropped, cli = _model_of(text, ""), _model_of(text, "config.json"), model_from_file(str(path))
    assert {(m.name, m.id) for m in (pasted, dropped, cli)} == {("MistralForCausalLM", "config-mistralforcausallm")}
    assert main(["explain", "--config", str(path)]) == 0
    assert capsys.readouterr().out.startswith("MistralForCausalLM on ")
    out = tmp_path / "page.html"
    assert app_main(["export", "--config", str(path), "--out", str(out)]) == 0
    assert "Roofline Lab — MistralForCausalLM on NVIDIA H100 SXM5 80GB" in out.read_text()


def test_list_and_validate_answer_in_json_too(capsys):
    """A trial: `explain` and the serving commands take --json, `list` and `validate` refused it (exit 2)."""
    import json

    assert main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    h200 = next(g for g in listed["gpus"] if g["id"] == "h200")
    assert h200["hbm_bandwidth"] == 4.8e12 and h200["dense_flop_per_s"]["bf16"] == 989.4e12
    assert h200["ridge_point_bf16"] == 989.4e12 / 4.8e12 and h200["capacity_bytes"] == 141 * 2**30
    llama = next(m for m in listed["models"] if m["id"] == "llama-3-8b")
    assert llama["params"] == 8_030_261_248 and llama["kv_bytes_per_token_bf16_gqa"] == 131_072
    assert main(["validate", "--no-loo", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = report["held_out"]["rows"]
    assert rows and all(r["set"] == "held_out" for r in rows)
    assert report["held_out"]["scores"]["n"] == len(rows) and "calibration_leave_one_out" not in report
    r = rows[0]
    assert r["source"]["url"].startswith("https://") and r["source"]["where"]
    assert r["measured_over_expected"] == (r["measured"] / r["expected"] if r["metric"].startswith("tokens")
                                           else r["expected"] / r["measured"])


def test_the_engine_flag_takes_any_case_as_the_link_does(capsys):
    """An engineer's trial: ``--engine vllm`` exited "invalid choice", while ``engine=vllm`` in a link chose vLLM."""
    assert main(["explain", "--engine", "vllm", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["expected_engine"] == "vLLM"
    assert main(["explain", "--engine", "Generic", "--json"]) == 0  # the lab's name for the default
    assert json.loads(capsys.readouterr().out)["expected_engine"] is None


def test_explain_marks_every_figure_an_unmodelled_key_can_change(tmp_path, capsys):
    """An engineer's trial: ``explain --config`` said APPROXIMATE on its first line only; the parameter count, the
    step time, the tokens/s and the expected line below it were bare, where the page marks each value "≈"."""
    config = {"architectures": ["WeirdForCausalLM"], "model_type": "llama", "hidden_size": 4096,
              "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
              "torch_dtype": "bfloat16", "parallel_attn_mlp": True}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    assert main(["explain", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    for label in ("Parameters N", "Step time", "Tokens/s ceiling", "KV cache", "Time per output token"):
        marked = [line for line in lines if line.lstrip("≈ ").startswith(label)]
        assert marked and all(line.startswith("  ≈ ") for line in marked), (label, marked)
    assert [line for line in lines if "Ridge point" in line][0].startswith("  Ridge point")  # the GPU's own
    assert re.search(r"^  ≈ = expected: .* of the ceiling\) \(approximate\)$", out, re.M)
    assert re.search(r"^  ≈ time to first token: ceiling .* \(approximate\)$", out, re.M)
    del config["parallel_attn_mlp"]
    path.write_text(json.dumps(config))
    assert main(["explain", "--config", str(path)]) == 0
    assert "≈" not in capsys.readouterr().out


def test_the_export_tabs_json_has_the_keys_explain_json_prints_for_a_gpu_of_your_own(capsys):
    """An engineer's trial: the Export tab's JSON for their own H20 had 126 scenario keys and ``explain --json`` 127;
    ``gpu_warnings`` (a peak that looks like a 2:4-sparsity headline) was the CLI's alone."""
    from core import Scenario
    from core.expected import expected_for_scenario
    from core.export import to_json
    from core.hardware import custom_accelerator

    assert main(["explain", "--gpu-name", "Fast card", "--gpu-bf16", "1979", "--gpu-bandwidth", "3.35",
                 "--gpu-memory", "80", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    s = Scenario()
    s.add_gpu(custom_accelerator("Fast card", bandwidth_tbs=3.35, capacity_gb=80, bf16=1979))
    r = s.evaluate()
    exported = json.loads(to_json(r, expected=expected_for_scenario(s, result=r)))["scenario"]
    assert set(exported) == set(cli) and exported["gpu_warnings"] == cli["gpu_warnings"]
    assert cli["gpu_warnings"][0].startswith("BF16 1,979 TFLOP/s is about twice the dense 989 of NVIDIA H100")
    assert "gpu_warnings" not in json.loads(to_json(Scenario().evaluate()))["scenario"]  # a catalogue GPU: none


def test_a_reader_that_leaves_early_gets_no_traceback():
    """``python -m core explain --json | head -1``: the reader has gone before the output is written; the command
    ends quietly with status 1 (a BrokenPipeError's traceback had followed 4 runs in 15)."""
    with subprocess.Popen([sys.executable, "-m", "core", "list", "--json"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        proc.stdout.close()  # before the child has imported anything, let alone printed
        err = proc.stderr.read().decode()
    assert proc.returncode == 1 and err == ""


def test_a_named_pipe_as_config_is_refused_not_waited_on(capsys, tmp_path):
    """An attacker's trial: ``--config FIFO`` blocked until the command was killed (opening one waits for a writer)."""
    import os
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    assert main(["explain", "--config", str(fifo)]) == 2
    assert capsys.readouterr().err == f"error: --config {fifo}: a named pipe, not a file\n"


def test_a_model_flag_beside_a_config_is_said_to_be_replaced(capsys, tmp_path):
    """An attacker's trial: ``--config F --model llama-3-70b`` evaluated the config, and nothing said --model went."""
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
                                "num_key_value_heads": 4, "intermediate_size": 512, "vocab_size": 1000}))
    assert main(["explain", "--config", str(path), "--model", "llama-3-70b", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["model"] == "config-mine"
    assert err == "warning: --model llama-3-70b is replaced by --config's model (mine)\n"


@pytest.mark.parametrize("kwargs, field", [
    ({"name": " "}, "name"), ({"name": "a\u202eb"}, "name"), ({"bandwidth_tbs": 0}, "bandwidth_tbs"),
    ({"bandwidth_tbs": None}, "bandwidth_tbs"), ({"capacity_gb": "80"}, "capacity_gb"),
    ({"capacity_gb": None, "capacity_gib": -1}, "capacity_gib"), ({"capacity_gib": 80}, "capacity_gb"),
    ({"bf16": None}, "bf16"), ({"fp8": 1e9}, "fp8"), ({"fp16": 1}, "fp16"), ({"reference": "h999"}, "reference"),
    ({"measured": "yes"}, "measured"), ({"link_gbs": 0.5}, "link_gbs"), ({"max_node": 2.5}, "max_node"),
])
def test_a_custom_gpus_refusal_names_the_argument_it_is_about(kwargs, field):
    """The CLI names the flag from the refusal's argument; it had matched the message's first words, so a refusal
    worded anew would have been blamed on --gpu-name."""
    from core.hardware import CustomAcceleratorError, custom_accelerator

    args = {"name": "Lab card", "bandwidth_tbs": 2.0, "capacity_gb": 80, "bf16": 400, **kwargs}
    with pytest.raises(CustomAcceleratorError) as refused:
        custom_accelerator(**args)
    assert refused.value.field == field
    flags = {dest: flag for flag, (dest, _, _) in CUSTOM_GPU_FLAGS.items()}
    assert field in flags or field in ("capacity_gib", "measured", "fp16")  # not flags: links and measure write them


def test_the_cost_of_a_workload_that_does_not_fit_says_if_it_fit():
    # A student's trial: many-GPU step 17 showed "$23.85" per million output tokens beside "23 tokens/s (if it fit)".
    from core import Scenario
    from core.explain import quantities

    r = Scenario(model="llama-3-70b", gpu_hour_price=2.0).evaluate()
    assert not r.fits
    assert quantities(r)["cost-output"].value == f"${r.cost_per_million_output_tokens:,.2f} (if it fit)"
    fits = Scenario(model="llama-3-70b", gpu_hour_price=2.0, tp=2).evaluate()
    assert quantities(fits)["cost-output"].value == f"${fits.cost_per_million_output_tokens:,.2f}"


def test_an_exported_page_links_to_the_lab_it_is_told_of(capsys, tmp_path):
    """A docs writer hosted the offline page on a docs site: its "Open this scenario in the full lab" went to that
    site's own /app (404), inside the iframe.  ``--lab-url`` names the lab; "" leaves the link out; a scheme other
    than http(s) is refused."""
    from app.__main__ import main as app_main
    from app.standalone import check_lab_url, full_lab_link
    from core import Scenario

    out = tmp_path / "page.html"
    assert app_main(["export", "--model", "llama-3-8b", "--out", str(out), "--lab-url",
                     "https://lab.example.org/app"]) == 0
    assert '"https://lab.example.org/app"' in out.read_text()
    assert full_lab_link(Scenario(model="llama-3-8b"), path="https://lab.example.org/app")["path"] == \
        "https://lab.example.org/app"
    assert full_lab_link(Scenario(model="llama-3-8b"), path="") is None
    assert full_lab_link(Scenario(model="llama-3-8b"))["path"] == "../app"  # a class page, served beside the lab
    for bad in ("javascript:alert(1)", "https://x.org/app\" onclick=\"x", "data:text/html,hi", "https:///app",
                "x" * 2001, "https://x.org/app?a=1", "https://x.org/app#top", None):
        with pytest.raises(ValueError, match="--lab-url"):
            check_lab_url(bad)
    assert app_main(["export", "--out", str(out), "--lab-url", "javascript:alert(1)"]) == 2
    assert capsys.readouterr().err.startswith("error: --lab-url 'javascript:alert(1)': accepted an http(s) address")
