"""chainrt is licensed Apache-2.0: the full license text at the root, the SPDX identifier in the
ROS package manifest and in the Python package's metadata."""

from __future__ import annotations

import re
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_license_file_is_the_full_apache_2_text():
    text = (REPO / "LICENSE").read_text()
    assert re.search(r"Apache License\s+Version 2\.0, January 2004", text)
    for section in ("1. Definitions.", "2. Grant of Copyright License.", "3. Grant of Patent License.",
                    "4. Redistribution.", "9. Accepting Warranty or Additional Liability.",
                    "END OF TERMS AND CONDITIONS", "APPENDIX: How to apply the Apache License"):
        assert section in text, section
    assert len(text) > 10_000


def test_package_xml_and_pyproject_carry_the_spdx_identifier():
    root = ET.parse(REPO / "package.xml").getroot()
    assert [e.text for e in root.findall("license")] == ["Apache-2.0"]
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]


def test_installed_metadata_says_apache_2():
    from importlib import metadata
    try:
        md = metadata.metadata("chainrt")
    except metadata.PackageNotFoundError:
        import pytest
        pytest.skip("chainrt is not installed in this environment (scripts/setup installs it)")
    assert md.get("License-Expression") == "Apache-2.0", dict(md)
