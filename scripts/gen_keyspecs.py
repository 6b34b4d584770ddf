#!/usr/bin/env python3
"""gen_keyspecs.py - writes src/commands/keyspec_table.c, ferry's copy of
Redis 7.0's key specifications and command tips, and
src/commands/keyspec_docs.c, the documentation COMMAND DOCS adds to a
command's summary (doc flags, deprecation, history, arguments).

Key specs (where a command's keys are and how it uses them) and tips are
facts of Redis's command interface. Rather than transcribing them by hand,
this script starts the installed /usr/bin/redis-server on a free port, asks
it COMMAND INFO and COMMAND DOCS (over RESP3, so the specs arrive as maps)
and emits one C row per command and subcommand (the two tables in the same
order, by full name). The output is committed; the build and the tests
never run this script. Regenerate with:

    python3 scripts/gen_keyspecs.py [--server /usr/bin/redis-server] [--outdir src/commands]

Commands whose key extraction Redis 7.0 completes with a procedure (numkeys
counted by an argument, SORT ... STORE, MIGRATE KEYS, XREAD STREAMS, the
variable flags of SET and BITFIELD) are listed in GETKEYS_PROCS below: that
part is not visible in COMMAND INFO, so it is stated here.
"""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
from resp_client import RawClient, parse, to_python  # noqa: E402

# full name -> the KSP_* procedure Redis 7.0 falls back to (or, for variable
# flags, uses instead of the specs); see keyspec_proc.c.
GETKEYS_PROCS = {
    "eval": "KSP_EVAL", "evalsha": "KSP_EVAL", "eval_ro": "KSP_EVAL", "evalsha_ro": "KSP_EVAL",
    "fcall": "KSP_EVAL", "fcall_ro": "KSP_EVAL",
    "zunionstore": "KSP_ZSTORE", "zinterstore": "KSP_ZSTORE", "zdiffstore": "KSP_ZSTORE",
    "zunion": "KSP_NUMKEYS_1", "zinter": "KSP_NUMKEYS_1", "zdiff": "KSP_NUMKEYS_1",
    "zintercard": "KSP_NUMKEYS_1", "sintercard": "KSP_NUMKEYS_1", "lmpop": "KSP_NUMKEYS_1",
    "zmpop": "KSP_NUMKEYS_1", "blmpop": "KSP_NUMKEYS_2", "bzmpop": "KSP_NUMKEYS_2",
    "sort": "KSP_SORT", "sort_ro": "KSP_SORT_RO", "migrate": "KSP_MIGRATE",
    "georadius": "KSP_GEORADIUS", "georadiusbymember": "KSP_GEORADIUS",
    "xread": "KSP_XREAD", "xreadgroup": "KSP_XREAD",
    "set": "KSP_SET", "bitfield": "KSP_BITFIELD",
}

FLAG_BITS = {
    "RO": "KS_RO", "RW": "KS_RW", "OW": "KS_OW", "RM": "KS_RM", "access": "KS_ACCESS",
    "update": "KS_UPDATE", "insert": "KS_INSERT", "delete": "KS_DELETE", "not_key": "KS_NOT_KEY",
    "incomplete": "KS_INCOMPLETE", "variable_flags": "KS_VARIABLE_FLAGS",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch_infos(server: str):
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        proc = subprocess.Popen([server, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", d],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 10
            while True:
                try:
                    c = RawClient(port)
                    break
                except OSError:
                    if time.time() > deadline:
                        raise
                    time.sleep(0.05)
            with c:
                c.command("HELLO", "3")
                return (to_python(parse(c.command("COMMAND", "INFO"))),
                        to_python(parse(c.command("COMMAND", "DOCS"))))
        finally:
            proc.terminate()
            proc.wait()


def s(b):
    return b.decode() if isinstance(b, bytes) else b


def c_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def flatten(info, out):
    name = s(info[0])
    out[name] = info
    for sub in info[9] or []:
        flatten(sub, out)


def spec_row(spec) -> str:
    spec = {s(k): v for k, v in spec.items()}
    flags = " | ".join(FLAG_BITS[s(f)] for f in sorted(spec["flags"], key=lambda f: list(FLAG_BITS).index(s(f))))
    bs = {s(k): v for k, v in spec["begin_search"].items()}
    fk = {s(k): v for k, v in spec["find_keys"].items()}
    bss = {s(k): v for k, v in (bs["spec"] or {}).items()}
    fks = {s(k): v for k, v in (fk["spec"] or {}).items()}
    bst, fkt = s(bs["type"]), s(fk["type"])
    if bst == "index":
        bsf = ".bs = KS_BS_INDEX, .bs_pos = %d" % bss["index"]
    elif bst == "keyword":
        bsf = ".bs = KS_BS_KEYWORD, .bs_pos = %d, .keyword = %s" % (bss["startfrom"], c_str(s(bss["keyword"])))
    else:
        bsf = ".bs = KS_BS_UNKNOWN"
    if fkt == "range":
        fkf = ".fk = KS_FK_RANGE, .fk_a = %d, .fk_b = %d, .fk_c = %d" % (fks["lastkey"], fks["keystep"], fks["limit"])
    elif fkt == "keynum":
        fkf = ".fk = KS_FK_KEYNUM, .fk_a = %d, .fk_b = %d, .fk_c = %d" % (
            fks["keynumidx"], fks["firstkey"], fks["keystep"])
    else:
        fkf = ".fk = KS_FK_UNKNOWN"
    notes = ", .notes = %s" % c_str(s(spec["notes"])) if "notes" in spec else ""
    return "{.flags = %s, %s, %s%s}" % (flags or "0", bsf, fkf, notes)


def all_rows(infos):
    rows = {}
    for info in infos:
        flatten(info, rows)
    return rows


def emit(infos) -> str:
    rows = all_rows(infos)
    lines = [
        "/* keyspec_table.c - GENERATED by scripts/gen_keyspecs.py from redis-server 7.0's",
        " * COMMAND INFO: the key specifications and tips of every Redis 7.0 command and",
        " * subcommand, by full name (sorted, for keyspec_find's binary search). Do not",
        " * edit: regenerate with `python3 scripts/gen_keyspecs.py`. keyspec.c attaches",
        " * the rows to ferry's command table at start-up; rows of commands ferry lacks",
        " * are unused. */",
        '#include "keyspec.h"',
        "",
    ]
    table = []
    for i, name in enumerate(sorted(rows)):
        info = rows[name]
        tips = [s(t) for t in info[7] or []]
        specs = info[8] or []
        tip_ref = spec_ref = "NULL"
        if tips:
            tip_ref = "tips_%d" % i
            lines.append("static const char *const %s[] = {%s, NULL};" % (tip_ref, ", ".join(c_str(t) for t in tips)))
        if specs:
            spec_ref = "specs_%d" % i
            lines.append("static const keyspec %s[] = {" % spec_ref)
            lines.extend("    %s," % spec_row(sp) for sp in specs)
            lines.append("};")
        proc = GETKEYS_PROCS.get(name, "KSP_NONE")
        table.append("    {%s, %s, %s, %d, %s}," % (c_str(name), tip_ref, spec_ref, len(specs), proc))
    lines.append("")
    lines.append("const cmd_keyinfo keyspec_table[] = {")
    lines.extend(table)
    lines.append("};")
    lines.append("const size_t keyspec_table_len = sizeof keyspec_table / sizeof keyspec_table[0];")
    return "\n".join(lines) + "\n"


ARG_FLAGS = {"optional": "DA_OPTIONAL", "multiple": "DA_MULTIPLE", "multiple_token": "DA_MULTIPLE_TOKEN"}
DOC_FLAGS = {"deprecated": "DOC_DEPRECATED", "syscmd": "DOC_SYSCMD"}


def flatten_docs(name, doc, out):
    doc = {s(k): v for k, v in doc.items()}
    out[name] = doc
    for sub, sd in (doc.get("subcommands") or {}).items():
        flatten_docs(s(sub), sd, out)


class DocEmitter:
    def __init__(self):
        self.lines = []
        self.n = 0

    def args(self, args) -> str:
        """emit an array of docarg (children first); its name"""
        rows = []
        for a in args:
            a = {s(k): v for k, v in a.items()}
            kids, nkids = "NULL", 0
            if "arguments" in a:
                kids, nkids = self.args(a["arguments"]), len(a["arguments"])
            fields = [".name = %s" % c_str(s(a["name"])), ".type = %s" % c_str(s(a["type"])),
                      ".key_spec_index = %d" % a.get("key_spec_index", -1)]
            for f in ("token", "since", "deprecated_since"):
                if f in a:
                    fields.append(".%s = %s" % (f, c_str(s(a[f]))))
            if a.get("flags"):
                fields.append(".flags = %s" % " | ".join(ARG_FLAGS[s(x)] for x in a["flags"]))
            if nkids:
                fields.append(".args = %s, .nargs = %d" % (kids, nkids))
            rows.append("    {%s}," % ", ".join(fields))
        self.n += 1
        name = "args_%d" % self.n
        self.lines.append("static const docarg %s[] = {" % name)
        self.lines.extend(rows)
        self.lines.append("};")
        return name

    def history(self, hist) -> str:
        self.n += 1
        name = "hist_%d" % self.n
        items = ", ".join("%s, %s" % (c_str(s(v)), c_str(s(d))) for v, d in hist)
        self.lines.append("static const char *const %s[] = {%s, NULL};" % (name, items))
        return name


def emit_docs(infos, docs) -> str:
    names = sorted(all_rows(infos))
    flat = {}
    for n, d in docs.items():
        flatten_docs(s(n), d, flat)
    em = DocEmitter()
    table = []
    for name in names:
        d = flat.get(name, {})
        fields = []
        if d.get("doc_flags"):
            fields.append(".doc_flags = %s" % " | ".join(DOC_FLAGS[s(x)] for x in d["doc_flags"]))
        for f in ("deprecated_since", "replaced_by"):
            if f in d:
                fields.append(".%s = %s" % (f, c_str(s(d[f]))))
        if d.get("history"):
            fields.append(".history = %s" % em.history(d["history"]))
        if d.get("arguments"):
            fields.append(".args = %s, .nargs = %d" % (em.args(d["arguments"]), len(d["arguments"])))
        table.append("    {%s}, /* %s */" % (", ".join(fields), name))
    head = [
        "/* keyspec_docs.c - GENERATED by scripts/gen_keyspecs.py from redis-server 7.0's",
        " * COMMAND DOCS: what COMMAND DOCS prints of a command beyond its summary, since,",
        " * group and complexity (doc flags, deprecation, history, the argument tree),",
        " * one row per row of keyspec_table.c, in the same order. Do not edit:",
        " * regenerate with `python3 scripts/gen_keyspecs.py`. */",
        '#include "keyspec.h"',
        "",
    ]
    tail = ["", "const cmd_docinfo keyspec_docs[] = {"] + table + ["};"]
    return "\n".join(head + em.lines + tail) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", default="/usr/bin/redis-server")
    ap.add_argument("--outdir", default=os.path.join(HERE, "..", "src", "commands"))
    a = ap.parse_args()
    infos, docs = fetch_infos(a.server)
    for fname, text in (("keyspec_table.c", emit(infos)), ("keyspec_docs.c", emit_docs(infos, docs))):
        path = os.path.join(a.outdir, fname)
        with open(path, "w") as f:
            f.write(text)
        print("wrote %s" % path)


if __name__ == "__main__":
    main()
