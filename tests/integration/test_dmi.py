"""Instance metadata: only the cloud the DMI names is asked (issue #16 item 13)."""
import json
import os
import signal
import sqlite3
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import FIXTURES, gpuvet_bin
from helpers import (NULL, Holder, Listener, good_fp, has_fio, import_fixture, integrity_ok, make_store, marked_pids,
                     sha, start_run, stat_fields, tree_env, wait_for, wait_gone)


# ---- 13. DMI first: only the cloud DMI names is asked ----




def dmi_root(tmp_path, vendor, product, bios="", board=None):
    d = tmp_path / "root" / "sys" / "class" / "dmi" / "id"
    d.mkdir(parents=True)
    (d / "sys_vendor").write_text(vendor + "\n")
    (d / "product_name").write_text(product + "\n")
    (d / "bios_vendor").write_text(bios + "\n")
    (d / "board_vendor").write_text((vendor if board is None else board) + "\n")
    return tmp_path / "root"


@pytest.mark.parametrize("vendor,product,bios,aws_asked,ali_asked,provider", [
    ("Dell Inc.", "XPS 13 9310", "Dell Inc.", False, False, "unknown"),
    ("QEMU", "Standard PC (Q35 + ICH9, 2009)", "SeaBIOS", False, False, "unknown"),
    ("Google", "Google Compute Engine", "Google", False, False, "unknown"),
    ("Amazon EC2", "p5.48xlarge", "Amazon EC2", True, False, "aws"),
    ("Alibaba Cloud", "Alibaba Cloud ECS", "SeaBIOS", False, True, "alibaba"),
])
def test_only_the_cloud_dmi_names_is_asked(gpuvet, tmp_path, vendor, product, bios, aws_asked,
                                              ali_asked, provider):
    aws, ali = Listener(), Listener()
    try:
        root = dmi_root(tmp_path, vendor, product, bios)
        env = {"GPUVET_NO_METADATA": "", "GPUVET_IMDS_AWS": aws.url, "GPUVET_IMDS_ALIBABA": ali.url,
               "GPUVET_SYSROOT": str(root)}
        for cmd in (["inventory", "--json"], ["run", "--bench", "null", "--json"]):
            import json
            out = json.loads(gpuvet(*cmd, env=dict(env, **NULL), check=0).stdout)
            cloud = out["cloud"] if "cloud" in out else out["inventory"]["cloud"]
            assert cloud["provider"] == provider, cloud
            assert cloud["source"] == ("none" if provider == "unknown" else "heuristic"), cloud
        time.sleep(0.3)
        assert (aws.conns > 0) == aws_asked, (aws.conns, ali.conns)
        assert (ali.conns > 0) == ali_asked, (aws.conns, ali.conns)
    finally:
        aws.close()
        ali.close()


def test_unreadable_dmi_asks_both(gpuvet, tmp_path):
    aws, ali = Listener(), Listener()
    try:
        root = tmp_path / "root"
        root.mkdir()
        env = {"GPUVET_NO_METADATA": "", "GPUVET_IMDS_AWS": aws.url, "GPUVET_IMDS_ALIBABA": ali.url,
               "GPUVET_SYSROOT": str(root)}
        gpuvet("inventory", "--json", env=env, check=0)
        time.sleep(0.3)
        assert aws.conns > 0 and ali.conns > 0
    finally:
        aws.close()
        ali.close()
