"""Golden sets from Python: read a case, write outputs, check a set; the
verdicts and exit codes are those of `dsa-oracle check` on the same folders."""

import json
import os

import numpy as np
import pytest

import dsa_oracle
from conftest import GOLDEN, run_cli

SET = os.path.join(GOLDEN, "exact/edge")


def write_expected_as_outputs(golden_dir, out_dir):
    for path in dsa_oracle.golden.cases(golden_dir):
        case = dsa_oracle.golden.read_case(path)
        dsa_oracle.golden.write_outputs(os.path.join(out_dir, case.file), case.expected)


def cli_check(golden_dir, out_dir, tmp_path):
    report = tmp_path / "cli.json"
    result = run_cli("check", "--golden", golden_dir, "--outputs", str(out_dir), "--json", str(report), check=False)
    return result.returncode, json.loads(report.read_text())


def test_read_case():
    case = dsa_oracle.golden.read_case(dsa_oracle.golden.cases(SET)[0])
    assert case.op in dsa_oracle._core.golden_ops() and case.profile == "exact"
    assert set(case.expected) == set(case.metadata["outputs"].split(","))
    assert not set(case.inputs) & set(case.expected)
    assert all(isinstance(a, np.ndarray) for a in case.inputs.values())


def test_expected_outputs_pass_like_the_cli(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    write_expected_as_outputs(SET, out)
    report = dsa_oracle.golden.check(SET, out)
    code, from_cli = cli_check(SET, out, tmp_path)
    assert report.ok and report.exit_code == 0 == code, str(report)
    assert [c["status"] for c in report.cases] == [c["status"] for c in from_cli["cases"]]
    assert report.checks_total == from_cli["checks_total"]


def test_a_wrong_output_fails_like_the_cli(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    write_expected_as_outputs(SET, out)
    victim = dsa_oracle.golden.cases(SET)[1]
    case = dsa_oracle.golden.read_case(victim)
    topk = case.expected["topk_indices"].copy()
    topk[0, 0] = topk[0, 1]  # a duplicate
    dsa_oracle.golden.write_outputs(out / case.file, {"topk_indices": topk})
    report = dsa_oracle.golden.check(SET, out)
    code, from_cli = cli_check(SET, out, tmp_path)
    assert report.exit_code == 1 == code and not report.ok
    assert [c["status"] for c in report.cases] == [c["status"] for c in from_cli["cases"]]
    assert report.to_dict()["checks_failed"] == from_cli["checks_failed"] >= 1
    assert "duplicates 1" in str(report)
    one = case.check({"topk_indices": topk})
    assert not one.ok and one["topk"].details["duplicates"] == 1


def test_a_missing_output_is_bad_input(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    report = dsa_oracle.golden.check(SET, out)
    code, _ = cli_check(SET, out, tmp_path)
    assert report.exit_code == 2 == code and not report.ok


def test_poisoned_buffers_and_bf16_outputs(tmp_path):
    bf16_set = os.path.join(GOLDEN, "deepgemm_sm100_bf16/edge")
    path = dsa_oracle.golden.cases(bf16_set)[0]
    case = dsa_oracle.golden.read_case(path)
    buffers = case.poisoned_outputs()
    assert buffers["logits"].dtype == np.uint16 and (buffers["logits"] == dsa_oracle.POISON_BF16_BITS).all()
    report = case.check(buffers)
    assert not report.ok and not report["written"].passed
    assert case.check(case.expected).ok


def test_torch_case_round_trip(tmp_path, torch):
    path = os.path.join(GOLDEN, "exact/v32_decode/v32_decode_01_nn2.safetensors")
    case = dsa_oracle.golden.read_case(path, framework="torch")
    assert case.expected["logits"].dtype == torch.float32
    buffers = case.poisoned_outputs(like=case.expected["logits"])
    assert isinstance(buffers["topk_indices"], torch.Tensor)
    buffers["topk_indices"].copy_(case.expected["topk_indices"])
    buffers["logits"].copy_(case.expected["logits"])
    dsa_oracle.golden.write_outputs(tmp_path / case.file, buffers)
    assert dsa_oracle.golden.check_case(path, buffers).ok
    written = dsa_oracle.golden.check(os.path.dirname(path), tmp_path)  # the other cases of the set are missing
    assert written.exit_code == 2
    assert [c["status"] for c in written.cases if c["file"] == case.file] == ["pass"]


def test_implementations_table():
    table = {e["name"]: e for e in dsa_oracle.implementations()}
    assert "reference" in table and table["reference"]["available"]
    assert "decode_logits" in table["reference"]["ops"]
    assert any("topk" in e["ops"] for n, e in table.items() if n != "reference")


@pytest.mark.parametrize("impl", ["reference", "cpu_radix_topk"])
def test_check_an_implementation_in_process_like_the_cli(impl, tmp_path):
    golden_dir = os.path.join(GOLDEN, "exact/v32_decode")
    report = dsa_oracle.golden.check(golden_dir, impl=impl)
    cli_json = tmp_path / "cli.json"
    result = run_cli("check", "--golden", golden_dir, "--impl", impl, "--json", str(cli_json), check=False)
    from_cli = json.loads(cli_json.read_text())
    assert report.exit_code == result.returncode == 0 and report.ok, str(report)
    assert [c["status"] for c in report.cases] == [c["status"] for c in from_cli["cases"]]
    assert report.checks_total == from_cli["checks_total"] > 0
    with pytest.raises(ValueError, match="outputs_dir or impl"):
        dsa_oracle.golden.check(golden_dir)
    with pytest.raises(ValueError, match="impl"):
        dsa_oracle.golden.check(golden_dir, impl="no_such_kernel")
