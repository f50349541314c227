#!/usr/bin/env python3
"""Makes a tree of many tiny files for catalog scaling runs (issue 27).

    bench/gen-many.py DIR FILES [--per-dir 1000]

DIR gets FILES files, PER_DIR to a directory (d0000000/f0000 ...), each holding its own
index as text (a few bytes, so every digest differs). Tiny files cost a block each on
most file systems; on ext4 made with `-O inline_data` they live in their inodes, which
is how the 10M-file tree fits on a small disk (see docs/benchmarks.md). Existing files
are left as they are, so an interrupted run can be resumed.
"""
import argparse
import os


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("files", type=int)
    ap.add_argument("--per-dir", type=int, default=1000)
    a = ap.parse_args()
    dirs = (a.files + a.per_dir - 1) // a.per_dir
    made = 0
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    for d in range(dirs):
        dpath = os.path.join(a.dir, "d%07d" % d)
        os.makedirs(dpath, exist_ok=True)
        dfd = os.open(dpath, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for f in range(min(a.per_dir, a.files - made)):
                name = "f%05d" % f
                try:
                    fd = os.open(name, flags, 0o644, dir_fd=dfd)
                except FileExistsError:
                    continue
                os.write(fd, b"%d\n" % (d * a.per_dir + f))
                os.close(fd)
        finally:
            os.close(dfd)
        made += min(a.per_dir, a.files - made)


if __name__ == "__main__":
    main()
