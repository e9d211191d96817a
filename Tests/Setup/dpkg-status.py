#!/usr/bin/env python3
"""Makes a dpkg database (an admindir with a status file) of a Debian machine that has only the given
packages installed, with every package they depend on, for simulating installs against it
(`apt-get -s -o Dir::State::status=DIR/status`, `dpkg-query --admindir=DIR`).

    dpkg-status.py DIR [PACKAGE ...]

The machine always holds the essential packages (a bare Debian); add, say, gnome-core and
pipewire-audio for a GNOME desktop whose sound stack is PipeWire. Dependencies are followed as apt
would pick them: Depends and Pre-Depends, the first alternative that is a real package (else one that
provides it), no Recommends. The records come from apt's lists (`apt-get update` first).
"""
import os
import re
import subprocess
import sys


def available():
    """Every package apt can install, name -> its record; and virtual name -> the packages providing it."""
    out = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True, check=True).stdout
    packages, providers = {}, {}
    for block in out.split("\n\n"):
        match = re.search(r"^Package: (\S+)", block, re.M)
        if not match or match.group(1) in packages:
            continue
        name = match.group(1)
        packages[name] = block.strip("\n")
        provides = re.search(r"^Provides: (.*)$", block, re.M)
        for virtual in provides.group(1).split(",") if provides else []:
            providers.setdefault(re.sub(r"[\s(].*$", "", virtual.strip()), []).append(name)
    return packages, providers


def dependencies(record):
    """Each Depends/Pre-Depends clause as its list of alternatives (names only)."""
    clauses = []
    for field in ("Pre-Depends", "Depends"):
        match = re.search(rf"^{field}: (.*)$", record, re.M)
        for clause in match.group(1).split(",") if match else []:
            names = [re.sub(r"[\s(].*$", "", alt.strip()).split(":")[0] for alt in clause.split("|")]
            clauses.append([n for n in names if n])
    return clauses


# The fields of a status record (the archive's Filename, checksums and descriptions are not allowed).
KEPT = ("Package", "Essential", "Priority", "Section", "Installed-Size", "Maintainer", "Architecture", "Multi-Arch",
        "Source", "Version", "Replaces", "Provides", "Depends", "Pre-Depends", "Recommends", "Suggests", "Conflicts",
        "Breaks", "Enhances")


def status_record(record):
    """An apt record as dpkg's status file holds an installed package."""
    fields = dict(re.findall(r"^([A-Za-z0-9-]+): (.*)$", record, re.M))
    lines = [f"Package: {fields['Package']}", "Status: install ok installed"]
    lines += [f"{key}: {fields[key]}" for key in KEPT[1:] if key in fields]
    return "\n".join(lines + ["Description: a package of a simulated machine"])


def main():
    directory, wanted = sys.argv[1], sys.argv[2:]
    packages, providers = available()
    essential = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Essential}\n"], capture_output=True, text=True).stdout
    wanted += [line.split()[0] for line in essential.splitlines() if line.endswith(" yes")]

    def real(name):
        return name if name in packages else next(iter(providers.get(name, [])), None)

    chosen, pending = set(), list(wanted)
    while pending:
        name = real(pending.pop())
        if name is None or name in chosen:
            continue
        chosen.add(name)
        for alternatives in dependencies(packages[name]):
            satisfied = any(a in chosen or any(p in chosen for p in providers.get(a, [])) for a in alternatives)
            if not satisfied:
                pending.append(next((a for a in alternatives if a in packages), alternatives[0]))
    missing = [w for w in wanted if real(w) is None]
    if missing:
        sys.exit(f"dpkg-status: no package named or providing {', '.join(missing)} (apt-get update?)")
    os.makedirs(f"{directory}/updates", exist_ok=True)
    os.makedirs(f"{directory}/info", exist_ok=True)
    with open(f"{directory}/status", "w") as status:
        for name in sorted(chosen):
            status.write(status_record(packages[name]) + "\n\n")
    print(len(chosen))


main()
