#!/usr/bin/env python3
"""Outside checker for Fanorona proof certificates (format 1).

Written from the project's statement of the rules and of certificate format 1 only (kept
outside the repository then; docs/RULES.md and docs/CERTIFICATE.md state them in it), without
looking at the Rust project's code: the point is to re-check its results with an independent
implementation of the rules.  Python 3.11, standard library only.

Usage:
    check_certificate.py CERT [--probe 'COMMAND'] [--chunk N] [--progress]
    check_certificate.py --perft tests/data/perft-reference.tsv [--max-count N]
    check_certificate.py --selftest

Exit status of a certificate check:
    0  the certificate is correct ("OK ..." on stdout)
    1  the certificate is wrong ("FAIL line N: reason")
    2  the certificate is unreadable: bad gzip, truncated, bad UTF-8, unknown version,
       malformed header ("UNREADABLE ...")
    3  the check could not be completed: a d leaf but no --probe, or the probe command failed
       ("ERROR ...").  Neither "correct" nor "wrong" can be claimed then.
    4  a partial certificate: all it holds is correct, but it has open leaves ("PARTIAL ..."),
       so its claim holds only if they do.

Partial certificates are the project's extension of format 1: a header with "partial": true
allows leaves tagged 'o' (open: not decided within the file); anywhere else 'o' is wrong.

How the file is read: two streaming passes, never the whole file in memory.  The first pass only
notes which node numbers some 's K' names (a bitmap); the second checks every line, keeping an
explicit stack of the open inner nodes (with their legal moves and the child moves seen so far)
and the positions of just those finished nodes that an 's K' names.  d leaves go to a temp file
and are piped through the --probe command in batches of --chunk positions.  Errors are reported
as found while reading; a d leaf's table value is only known when its batch is probed, so a
structural error later in the file can be reported before a wrong d value earlier in it.

Readings of CERTIFICATE.md where it leaves room (see also the README.md beside this script):
- "A position with no legal move is a t leaf, not an inner node": an inner node there fails; a d
  leaf there is accepted (its value is checked against the tables like any other) and counted in
  the summary line; an s leaf may name a t leaf.
- 's K' may name any earlier finished node, leaf or inner, of any tag; 'r K' any proper
  ancestor.  Node numbers and depths must be plain decimal (no sign, no leading zeros).
- A tables board that is neither the root's board nor its transpose fails (exit 1); a missing
  header key, a bad value of goal/claim/tables or an unparsable root position is "malformed
  header" (exit 2).  tables.pieces bounds the total number of pieces of a d leaf.
- A probe answer '-' (the tables do not hold the position) fails the certificate (exit 1).
- A file that ends right after an inner node line, or mid-line, is truncated (exit 2).
"""

import argparse
import array
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

# --------------------------------------------------------------------------------------------
# Board geometry
# --------------------------------------------------------------------------------------------

# Direction i and 7 - i are opposite; withdrawal needs "the direction behind", so keeping the
# opposite a cheap arithmetic step matters in the move generator's inner loop.
DIRS = [(1, 0), (0, 1), (1, 1), (1, -1), (-1, 1), (-1, -1), (0, -1), (-1, 0)]  # (drow, dcol)
MAX_POINTS = 45
SHIFT = MAX_POINTS          # position key = white | black << 45 | side << 90
MASK45 = (1 << SHIFT) - 1


class Board:
    """Geometry of an RxC board: point p = row * C + col, row 0 at the bottom (White's side)."""

    def __init__(self, rows, cols):
        self.R, self.C = rows, cols
        self.N = rows * cols
        self.names = [chr(ord('a') + p % cols) + str(p // cols + 1) for p in range(self.N)]
        self.index = {n: p for p, n in enumerate(self.names)}
        # nbr[p][d]: the next point from p in direction d along a line, or -1.  A weak point has
        # no diagonal lines, so its diagonal entries stay -1.  A diagonal step from a strong point
        # lands on a strong point, so following nbr along a diagonal never leaves the lines.
        self.nbr = [[-1] * 8 for _ in range(self.N)]
        self.adj = [[] for _ in range(self.N)]      # [(d, q)] for every line through p
        self.adjmask = [0] * self.N                 # union of the bits of those q
        for p in range(self.N):
            r, c = divmod(p, cols)
            strong = (r + c) % 2 == 0
            for d, (dr, dc) in enumerate(DIRS):
                if dr != 0 and dc != 0 and not strong:
                    continue
                rr, cc = r + dr, c + dc
                if 0 <= rr < rows and 0 <= cc < cols:
                    q = rr * cols + cc
                    self.nbr[p][d] = q
                    self.adj[p].append((d, q))
                    self.adjmask[p] |= 1 << q

    def name(self):
        return f"{self.R}x{self.C}"


_BOARDS = {}


def board_of(rows, cols):
    key = (rows, cols)
    if key not in _BOARDS:
        _BOARDS[key] = Board(rows, cols)
    return _BOARDS[key]


class PositionError(ValueError):
    pass


def parse_position(text):
    """'BBB/B.W/WWW w' -> (board, white, black, side); side 0 = White to move, 1 = Black."""
    parts = text.split(' ')
    if len(parts) != 2 or parts[1] not in ('w', 'b'):
        raise PositionError(f"position {text!r}: expected 'ROWS/.../ROWS w|b'")
    rows = parts[0].split('/')
    R, C = len(rows), len(rows[0])
    if any(len(row) != C for row in rows):
        raise PositionError(f"position {text!r}: rows of different lengths")
    if R < 3 or C < 3 or R % 2 == 0 or C % 2 == 0 or R * C > MAX_POINTS:
        raise PositionError(f"position {text!r}: board {R}x{C} is not odd x odd, >= 3, <= 45 points")
    bd = board_of(R, C)
    white = black = 0
    for i, row in enumerate(rows):
        r = R - 1 - i                    # the text lists the top row first
        for c, ch in enumerate(row):
            bit = 1 << (r * C + c)
            if ch == 'W':
                white |= bit
            elif ch == 'B':
                black |= bit
            elif ch != '.':
                raise PositionError(f"position {text!r}: bad character {ch!r}")
    return bd, white, black, (0 if parts[1] == 'w' else 1)


_CELL = str.maketrans('012', '.WB')


def format_position(bd, white, black, side):
    # Written for speed (it runs once per d leaf): read the two bitboards' binary digits as
    # decimal numbers, so white + 2 * black spells 0/1/2 per point (the sets are disjoint, so no
    # digit carries), most significant point first: the top row first, each row right to left.
    digits = str(int(bin(white)[2:]) + 2 * int(bin(black)[2:])).rjust(bd.N, '0').translate(_CELL)
    C = bd.C
    rows = [digits[i:i + C][::-1] for i in range(0, bd.N, C)]
    return '/'.join(rows) + (' w' if side == 0 else ' b')


def make_key(white, black, side):
    return white | (black << SHIFT) | (side << (2 * SHIFT))


def split_key(key):
    return key & MASK45, (key >> SHIFT) & MASK45, key >> (2 * SHIFT)


def key_text(bd, key):
    return format_position(bd, *split_key(key))


# --------------------------------------------------------------------------------------------
# Move generation
# --------------------------------------------------------------------------------------------

def _line(nbr, opp, r, d):
    """The enemy pieces removed by a capture whose first victim is r, going on in direction d:
    r and every enemy piece directly behind it, up to an empty point, own piece or the edge."""
    m = 0
    while r >= 0 and (opp >> r) & 1:
        m |= 1 << r
        r = nbr[r][d]
    return m


def _chain(bd, p, me, opp, visited, lastd, text, out):
    """Append every capturing continuation of the piece on p (each prefix is a move of its own,
    because the player may stop after any capture), recursing for extended captures.  The depth
    is bounded by the number of points, so recursion here is harmless."""
    occ = me | opp
    nbr = bd.nbr
    names = bd.names
    for d, q in bd.adj[p]:
        if d == lastd or (occ >> q) & 1 or (visited >> q) & 1:
            continue
        step = (1 << p) | (1 << q)
        r = nbr[q][d]                       # approach: enemy just beyond the destination
        if r >= 0 and (opp >> r) & 1:
            nopp = opp & ~_line(nbr, opp, r, d)
            t = text + '-' + names[q] + 'A'
            out.append((t, me ^ step, nopp))
            _chain(bd, q, me ^ step, nopp, visited | (1 << q), d, t, out)
        r = nbr[p][7 - d]                   # withdrawal: enemy just behind the start
        if r >= 0 and (opp >> r) & 1:
            nopp = opp & ~_line(nbr, opp, r, 7 - d)
            t = text + '-' + names[q] + 'W'
            out.append((t, me ^ step, nopp))
            _chain(bd, q, me ^ step, nopp, visited | (1 << q), d, t, out)


def gen_moves(bd, me, opp):
    """All legal moves of the side owning `me`: a list of (notation, me', opp')."""
    out = []
    x = me
    while x:
        low = x & -x
        p = low.bit_length() - 1
        x ^= low
        _chain(bd, p, me, opp, low, -1, bd.names[p], out)
    if out:
        return out                          # capture is compulsory
    occ = me | opp
    x = me
    while x:
        low = x & -x
        p = low.bit_length() - 1
        x ^= low
        for d, q in bd.adj[p]:
            if not (occ >> q) & 1:
                out.append((bd.names[p] + '-' + bd.names[q], me ^ low ^ (1 << q), opp))
    return out


def has_move(bd, me, opp):
    """Whether the side owning `me` has any legal move.  Every move starts with a step to an
    adjacent empty point on a line; if such a step exists it is either a capture or, when no
    capture exists anywhere, a legal paika move.  So this is just "some piece can step"."""
    empty = ~(me | opp)
    x = me
    while x:
        low = x & -x
        if bd.adjmask[low.bit_length() - 1] & empty:
            return True
        x ^= low
    return False


def moves_of_key(bd, key):
    """Legal moves from a position key: {notation: child key}."""
    white, black, side = split_key(key)
    res = {}
    if side == 0:
        for t, me, opp in gen_moves(bd, white, black):
            res[t] = make_key(me, opp, 1)
    else:
        for t, me, opp in gen_moves(bd, black, white):
            res[t] = make_key(opp, me, 0)
    return res


def perft(bd, white, black, side, depth):
    if depth == 0:
        return 1
    me, opp = (white, black) if side == 0 else (black, white)
    moves = gen_moves(bd, me, opp)
    if depth == 1:
        return len(moves)
    total = 0
    for _, nme, nopp in moves:
        if side == 0:
            total += perft(bd, nme, nopp, 1, depth - 1)
        else:
            total += perft(bd, nopp, nme, 0, depth - 1)
    return total


def run_perft(path, max_count):
    checked = skipped = bad = 0
    t0 = time.time()
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            if not line or line.startswith('#') or line.startswith('board\t'):
                continue
            board, pos, depth, count = line.split('\t')
            depth, count = int(depth), int(count)
            if count > max_count:
                skipped += 1
                continue
            bd, w, b, s = parse_position(pos)
            if bd.name() != board:
                print(f"MISMATCH board column {board} but position is {bd.name()}: {pos}")
                bad += 1
                continue
            got = perft(bd, w, b, s, depth)
            checked += 1
            if got != count:
                bad += 1
                print(f"MISMATCH {board} {pos!r} depth {depth}: expected {count}, got {got}")
    print(f"perft: {checked} rows checked, {bad} mismatches, {skipped} skipped "
          f"(count > {max_count}), {time.time() - t0:.1f} s")
    return 0 if bad == 0 else 1


# --------------------------------------------------------------------------------------------
# Certificate checking
# --------------------------------------------------------------------------------------------

class CertFail(Exception):
    """The certificate is wrong (exit 1)."""

    def __init__(self, line, msg):
        super().__init__(f"FAIL line {line}: {msg}")


class CertUnreadable(Exception):
    """The certificate cannot be read (exit 2)."""

    def __init__(self, msg):
        super().__init__(f"UNREADABLE: {msg}")


class CheckError(Exception):
    """The check could not be completed (exit 3)."""

    def __init__(self, msg):
        super().__init__(f"ERROR: {msg}")


_DEC = re.compile(r'(0|[1-9][0-9]*)\Z')
_BOARD_RE = re.compile(r'([1-9][0-9]*)x([1-9][0-9]*)\Z')


def _num(s):
    """Plain decimal (no sign, no leading zeros), else None."""
    return int(s) if _DEC.match(s) else None


def _open_lines(path):
    """A line iterator over the file, lines split at '\\n' only and kept with their ending."""
    if path.endswith('.gz'):
        return gzip.open(path, 'rt', encoding='utf-8', newline='\n')
    return open(path, 'rt', encoding='utf-8', newline='\n')


# Errors from reading the file itself: bad gzip, truncated gzip stream, bad UTF-8.
_READ_ERRORS = (OSError, EOFError, zlib.error, UnicodeDecodeError)


def _parse_header(line):
    if not line.endswith('\n'):
        raise CertUnreadable("line 1: header has no line ending (truncated?)")
    try:
        h = json.loads(line)
    except ValueError as e:
        raise CertUnreadable(f"line 1: header is not JSON ({e})")
    if not isinstance(h, dict):
        raise CertUnreadable("line 1: header is not a JSON object")
    if h.get('format') != 'fanorona-certificate':
        raise CertUnreadable(f"line 1: format is {h.get('format')!r}, not 'fanorona-certificate'")
    v = h.get('version')
    if type(v) is not int:
        raise CertUnreadable(f"line 1: version {v!r} is not an integer")
    if v != 1:
        raise CertUnreadable(f"line 1: unknown version {v}")
    for k in ('position', 'goal', 'claim', 'tables'):
        if k not in h:
            raise CertUnreadable(f"line 1: header lacks {k!r}")
    if not isinstance(h['position'], str):
        raise CertUnreadable("line 1: position is not a string")
    try:
        bd, w, b, s = parse_position(h['position'])
    except PositionError as e:
        raise CertUnreadable(f"line 1: {e}")
    if h['goal'] not in ('white wins', 'black wins'):
        raise CertUnreadable(f"line 1: goal {h['goal']!r} is neither 'white wins' nor 'black wins'")
    if h['claim'] not in ('proven', 'disproven'):
        raise CertUnreadable(f"line 1: claim {h['claim']!r} is neither 'proven' nor 'disproven'")
    tables = h['tables']
    if tables is not None:
        if not isinstance(tables, dict):
            raise CertUnreadable("line 1: tables is neither null nor an object")
        board = tables.get('board')
        pieces = tables.get('pieces')
        if not isinstance(board, str) or not _BOARD_RE.match(board):
            raise CertUnreadable(f"line 1: tables board {board!r} is not 'RxC'")
        if type(pieces) is not int or pieces < 0:
            raise CertUnreadable(f"line 1: tables pieces {pieces!r} is not a non-negative integer")
        if board not in (f"{bd.R}x{bd.C}", f"{bd.C}x{bd.R}"):
            # Well formed but inconsistent: the certificate is wrong rather than unreadable.
            raise CertFail(1, f"tables board {board} is neither the root's board {bd.name()} "
                              f"nor its transpose")
    return h, bd, make_key(w, b, s)


def _scan_shared_targets(path):
    """First pass: the set of node numbers K named by some 's K' leaf, as a bitmap.  Knowing them
    in advance lets the main pass remember the position of only those finished nodes, instead of
    every node of a file that may have many millions."""
    bits = bytearray()
    last = '\n'
    with _open_lines(path) as f:
        next(f, None)
        for line in f:
            last = line
            if ' s ' in line:                        # moves never contain spaces
                parts = line.split(' ')
                if len(parts) == 4 and parts[2] == 's':
                    k = _num(parts[3].rstrip('\n'))
                    if k is not None:
                        if (k >> 3) >= len(bits):
                            bits.extend(bytes((k >> 3) + 1 - len(bits) + 4096))
                        bits[k >> 3] |= 1 << (k & 7)
    if not last.endswith('\n'):
        raise CertUnreadable("last line has no line ending (truncated?)")
    return bits


class _Prober:
    """Collects d leaves and checks them against the tables in batches: positions go to a temp
    file that is piped into one run of the probe command per batch, so memory stays small and no
    process is started per leaf."""

    def __init__(self, bd, command, chunk):
        self.bd, self.command, self.chunk = bd, command, chunk
        self.tmp = None
        self.lines = array.array('Q')
        self.values = bytearray()
        self.probed = 0

    def add(self, line_no, key, v):
        if self.tmp is None:
            self.tmp = tempfile.TemporaryFile('w+', encoding='utf-8')
        self.tmp.write(key_text(self.bd, key) + '\n')
        self.lines.append(line_no)
        self.values += v.encode()
        if len(self.lines) >= self.chunk:
            self.flush()

    def flush(self):
        n = len(self.lines)
        if n == 0:
            return
        self.tmp.flush()
        self.tmp.seek(0)
        try:
            proc = subprocess.run(self.command, shell=True, stdin=self.tmp,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            raise CheckError(f"cannot run probe command {self.command!r}: {e}")
        err = proc.stderr.decode('utf-8', 'replace')
        out = proc.stdout.decode('utf-8', 'replace').split('\n')
        if out and out[-1] == '':
            out.pop()
        answers = [a.strip() for a in out]
        valid = len(answers) == n and all(a in ('w', 'd', 'l', '-') for a in answers)
        if valid:
            # Even when the probe's exit status is bad, a complete answer that shows a wrong leaf
            # proves the certificate wrong; only an all-correct answer needs a clean exit.
            for i, a in enumerate(answers):
                v = chr(self.values[i])
                if a == '-':
                    pos = self._batch_position(i)
                    err_lines = [e.strip() for e in err.split('\n') if e.strip()]
                    why = next((e for e in err_lines if pos in e), err_lines[0] if err_lines else '')
                    raise CertFail(self.lines[i], f"d leaf: the tables do not hold {pos}"
                                                  + (f" (probe: {why[:200]})" if why else ""))
                if a != v:
                    raise CertFail(self.lines[i], f"d leaf says {v} but the tables say {a}")
        if proc.returncode != 0 or not valid:
            tail = err.strip()[-500:]
            raise CheckError(f"probe command {self.command!r} exited with status {proc.returncode} "
                             f"giving {len(answers)} answers for {n} positions"
                             + (f"; stderr: {tail}" if tail else ""))
        self.probed += n
        self.tmp.close()
        self.tmp = None
        self.lines = array.array('Q')
        self.values = bytearray()

    def _batch_position(self, i):
        """The i-th position of the current batch, re-read from the temp file (on failure)."""
        self.tmp.seek(0)
        for j, line in enumerate(self.tmp):
            if j == i:
                return line.strip()
        return '?'


# Stack entry fields: one entry per open inner node (an ancestor of the line being read).
E_DEPTH, E_ID, E_LINE, E_KEY, E_LEGAL, E_SEEN, E_ANSWER = range(7)


def check_certificate(path, probe=None, chunk=1_000_000, progress=False):
    """Check one certificate.  Returns (exit status, message)."""
    t0 = time.time()
    try:
        return _check(path, probe, chunk, progress, t0)
    except CertFail as e:
        return 1, str(e)
    except CertUnreadable as e:
        return 2, str(e)
    except CheckError as e:
        return 3, str(e)
    except _READ_ERRORS as e:
        return 2, f"UNREADABLE: {type(e).__name__}: {e}"


def _check(path, probe, chunk, progress, t0):
    with _open_lines(path) as f:
        header = f.readline()
    if header == '':
        raise CertUnreadable("empty file, no header")
    h, bd, root_key = _parse_header(header)
    tables = h['tables']
    max_pieces = tables['pieces'] if tables is not None else None
    x_side = 0 if h['goal'] == 'white wins' else 1          # X: the side the goal is about
    proof = h['claim'] == 'proven'
    choosing = x_side if proof else 1 - x_side

    shared = _scan_shared_targets(path)
    nshared = len(shared)

    def referenced(i):
        return (i >> 3) < nshared and (shared[i >> 3] >> (i & 7)) & 1

    finished = {}        # node number -> position key, for finished nodes some 's K' names
    open_ids = {}        # node number -> position key, for the open inner nodes (ancestors)
    stack = []
    prober = _Prober(bd, probe, chunk) if probe else None
    counts = {'i': 0, 'd': 0, 't': 0, 'r': 0, 's': 0, 'o': 0}
    partial = h.get('partial') is True
    node = -1
    line_no = 1
    last_was_inner = False
    d_no_move = 0

    def finish(e):
        # The whole subtree of inner node e has been read: check its children are complete.
        seen = e[E_SEEN]
        if not seen:
            raise CertFail(e[E_LINE], "inner node has no children")
        if e[E_ANSWER] and len(seen) != len(e[E_LEGAL]):
            missing = sorted(m for m in e[E_LEGAL] if m not in seen)
            raise CertFail(e[E_LINE], f"answering side to move but {len(missing)} legal move(s) "
                                      f"missing: {' '.join(missing[:10])}"
                                      + (" ..." if len(missing) > 10 else ""))
        del open_ids[e[E_ID]]
        if referenced(e[E_ID]):
            finished[e[E_ID]] = e[E_KEY]

    with _open_lines(path) as f:
        f.readline()
        for line in f:
            line_no += 1
            node += 1
            if not line.endswith('\n'):
                raise CertUnreadable(f"line {line_no} has no line ending (truncated?)")
            if progress and node % 1_000_000 == 0 and node:
                el = time.time() - t0
                print(f"  {node} nodes, {el:.0f} s, {node / el:.0f} nodes/s", file=sys.stderr)
            parts = line[:-1].split(' ')
            n = len(parts)
            if n != 3 and n != 4:
                raise CertFail(line_no, f"expected 'DEPTH MOVE TAG [ARG]', got {line[:-1][:100]!r}")
            depth = _num(parts[0])
            if depth is None:
                raise CertFail(line_no, f"depth {parts[0]!r} is not a plain decimal number")
            move, tag = parts[1], parts[2]
            if tag in ('i', 't', 'o'):
                if n != 3:
                    raise CertFail(line_no, f"tag {tag} takes no argument")
            elif tag in ('d', 'r', 's'):
                if n != 4:
                    raise CertFail(line_no, f"tag {tag} needs an argument")
            else:
                raise CertFail(line_no, f"unknown tag {tag!r}")

            # Close the subtrees this line is not inside of.
            while stack and stack[-1][E_DEPTH] >= depth:
                finish(stack.pop())

            # Find this node's position: the root's from the header, others by the move.
            if node == 0:
                if depth != 0:
                    raise CertFail(line_no, f"the root must have depth 0, not {depth}")
                if move != '-':
                    raise CertFail(line_no, f"the root's move must be '-', not {move!r}")
                key = root_key
            else:
                if not stack:
                    raise CertFail(line_no, "the root's subtree has already ended: a second root "
                                            "or a child of a leaf" if depth > 0 else
                                   "a second root (depth 0)")
                parent = stack[-1]
                if parent[E_DEPTH] != depth - 1:
                    raise CertFail(line_no, f"depth {depth} after depth {parent[E_DEPTH]}: "
                                            f"not a child of the open node at line {parent[E_LINE]}")
                key = parent[E_LEGAL].get(move)
                if key is None:
                    raise CertFail(line_no, f"move {move} is not legal in "
                                            f"{key_text(bd, parent[E_KEY])} (line {parent[E_LINE]})")
                seen = parent[E_SEEN]
                if move in seen:
                    raise CertFail(line_no, f"move {move} appears twice under line {parent[E_LINE]}")
                seen.add(move)

            counts[tag] += 1
            last_was_inner = tag == 'i'
            side = key >> (2 * SHIFT)
            if tag == 'i':
                legal = moves_of_key(bd, key)
                if not legal:
                    raise CertFail(line_no, f"inner node but {key_text(bd, key)} has no legal "
                                            f"move (it must be a t leaf)")
                stack.append([depth, node, line_no, key, legal, set(), side != choosing])
                open_ids[node] = key
                continue

            # A leaf: its subtree is the line itself.
            if tag == 'o':
                if not partial:
                    raise CertFail(line_no, "o leaf (open) but the header does not say "
                                            "\"partial\": true")
            elif tag == 't':
                white, black, _ = split_key(key)
                me, opp = (white, black) if side == 0 else (black, white)
                if has_move(bd, me, opp):
                    raise CertFail(line_no, f"t leaf but the side to move has a legal move in "
                                            f"{key_text(bd, key)}")
                # The side to move has lost: that must be X's opponent in a proof, X in a disproof.
                if proof and side == x_side:
                    raise CertFail(line_no, f"t leaf with X to move: a loss for X in a proof that "
                                            f"{h['goal']}")
                if not proof and side != x_side:
                    raise CertFail(line_no, f"t leaf with X's opponent to move: a win for X in a "
                                            f"disproof that {h['goal']}")
            elif tag == 'd':
                v = parts[3]
                if v not in ('w', 'd', 'l'):
                    raise CertFail(line_no, f"d leaf value {v!r} is not w, d or l")
                x_wins = (v == 'w') if side == x_side else (v == 'l')
                who = "X" if side == x_side else "X's opponent"
                if proof and not x_wins:
                    raise CertFail(line_no, f"leaf 'd {v}' with {who} to move is not a win for X "
                                            f"in a proof that {h['goal']}")
                if not proof and x_wins:
                    raise CertFail(line_no, f"leaf 'd {v}' with {who} to move is a win for X in a "
                                            f"disproof that {h['goal']}")
                if max_pieces is None:
                    raise CertFail(line_no, "d leaf but the header's tables are null")
                pieces = bin(key & ((1 << (2 * SHIFT)) - 1)).count('1')
                if pieces > max_pieces:
                    raise CertFail(line_no, f"d leaf with {pieces} pieces but the tables hold at "
                                            f"most {max_pieces}")
                # CERTIFICATE.md says a no-move position "is a t leaf, not an inner node"; a d
                # leaf there is still sound (the tables must then say 'l'), so it is allowed and
                # only counted, for the summary line.
                white, black, _ = split_key(key)
                if not (has_move(bd, white, black) if side == 0 else has_move(bd, black, white)):
                    d_no_move += 1
                if prober is None:
                    raise CheckError(f"line {line_no}: d leaf but no --probe command was given, "
                                     f"so it cannot be checked against the tables")
                prober.add(line_no, key, v)
            elif tag == 'r':
                if proof:
                    raise CertFail(line_no, "r leaf in a proof")
                k = _num(parts[3])
                if k is None:
                    raise CertFail(line_no, f"r argument {parts[3]!r} is not a node number")
                if k not in open_ids:
                    raise CertFail(line_no, f"r {k}: node {k} is not an ancestor of this node")
                if open_ids[k] != key:
                    raise CertFail(line_no, f"r {k}: position {key_text(bd, key)} differs from "
                                            f"node {k}'s {key_text(bd, open_ids[k])}")
            else:  # 's'
                k = _num(parts[3])
                if k is None:
                    raise CertFail(line_no, f"s argument {parts[3]!r} is not a node number")
                if k >= node:
                    raise CertFail(line_no, f"s {k}: not an earlier node (this is node {node})")
                if k in open_ids:
                    raise CertFail(line_no, f"s {k}: node {k} is an ancestor, its subtree has not "
                                            f"ended")
                if k not in finished:   # cannot happen: earlier non-ancestors are finished
                    raise CertFail(line_no, f"s {k}: node {k} has not been finished")
                if finished[k] != key:
                    raise CertFail(line_no, f"s {k}: position {key_text(bd, key)} differs from "
                                            f"node {k}'s {key_text(bd, finished[k])}")
            if referenced(node):
                finished[node] = key

    if node < 0:
        raise CertUnreadable("no node lines after the header (truncated?)")
    if last_was_inner:
        raise CertUnreadable(f"file ends right after the inner node at line {line_no} "
                             f"(truncated?)")
    while stack:
        finish(stack.pop())
    if prober is not None:
        prober.flush()
    el = time.time() - t0
    nodes = node + 1
    verdict = f"PARTIAL ({counts['o']} open leaves, the rest correct)" if counts['o'] else "OK"
    return 4 if counts['o'] else 0, (f"{verdict} {nodes} nodes ({counts['i']} inner; leaves d={counts['d']} t={counts['t']} "
               f"r={counts['r']} s={counts['s']}); '{h['goal']}' {h['claim']} for "
               f"{h['position']}; {prober.probed if prober else 0} d leaves probed; "
               f"{el:.2f} s ({nodes / max(el, 1e-9):.0f} nodes/s)"
               + (f"; note: {d_no_move} d leaves at positions with no legal move" if d_no_move
                  else ""))


# --------------------------------------------------------------------------------------------
# A table probe over a plain "POSITION VALUE" file (used by the self-test as the --probe command)
# --------------------------------------------------------------------------------------------

def table_probe(path):
    table = {}
    with open(path, encoding='utf-8') as f:
        for line in f:
            pos, _, v = line.rstrip('\n').rpartition(' ')
            table[pos] = v
    for line in sys.stdin:
        pos = line.rstrip('\n')
        v = table.get(pos)
        if v is None:
            print(f"not in table: {pos}", file=sys.stderr)
            v = '-'
        print(v)
    return 0


# --------------------------------------------------------------------------------------------
# Self-test: solve 3x3 exactly, write certificates, check them, tamper with them
# --------------------------------------------------------------------------------------------

def solve_all(bd):
    """Retrograde analysis of every position of a tiny board.  Returns {key: (value, rank)} for
    decided positions, value 'w'/'l' for the side to move; the rest are draws.  The rank strictly
    decreases along the winner's chosen move and along every move of the loser, which is what a
    finite proof tree needs."""
    from itertools import product
    keys = []
    for cells in product((0, 1, 2), repeat=bd.N):
        w = b = 0
        for p, c in enumerate(cells):
            if c == 1:
                w |= 1 << p
            elif c == 2:
                b |= 1 << p
        keys.append(make_key(w, b, 0))
        keys.append(make_key(w, b, 1))
    children = {}
    parents = {k: [] for k in keys}
    for k in keys:
        ch = set(moves_of_key(bd, k).values())
        children[k] = ch
        for c in ch:
            parents[c].append(k)
    remaining = {k: len(children[k]) for k in keys}
    val = {}
    frontier = [k for k in keys if not children[k]]
    for k in frontier:
        val[k] = ('l', 0)
    while frontier:
        nxt = []
        for c in frontier:
            cv, cr = val[c]
            for p in parents[c]:
                if p in val:
                    continue
                if cv == 'l':
                    val[p] = ('w', cr + 1)
                    nxt.append(p)
                else:
                    remaining[p] -= 1
                    if remaining[p] == 0:
                        val[p] = ('l', cr + 1)
                        nxt.append(p)
        frontier = nxt
    return val, keys


class _CertWriter:
    """Builds certificate lines for the self-test."""

    def __init__(self):
        self.lines = []

    def add(self, depth, move, tag, arg=None):
        self.lines.append(f"{depth} {move} {tag}" + (f" {arg}" if arg is not None else ""))
        return len(self.lines) - 1


def build_proof(bd, val, root, x_side, dleaf=None):
    """Proof that x_side wins from root (a win for X with X to move or a loss with X's opponent
    to move).  Shared leaves for transpositions; optional d leaves where dleaf(key, depth) says
    so."""
    cw = _CertWriter()
    done = {}
    sys.setrecursionlimit(100000)

    def rec(key, depth, move):
        if key in done:
            cw.add(depth, move, 's', done[key])
            return
        legal = moves_of_key(bd, key)
        side = key >> (2 * SHIFT)
        if not legal:
            i = cw.add(depth, move, 't')
        elif depth > 0 and dleaf and dleaf(key, depth):
            i = cw.add(depth, move, 'd', val.get(key, ('d',))[0])
        else:
            i = cw.add(depth, move, 'i')
            rank = val[key][1]
            if side == x_side:
                best = min((m for m in legal.items() if val.get(m[1], ('d',))[0] == 'l'),
                           key=lambda m: val[m[1]][1])
                assert val[best[1]][1] < rank
                rec(best[1], depth + 1, best[0])
            else:
                for m, c in sorted(legal.items()):
                    assert val[c][0] == 'w' and val[c][1] < rank
                    rec(c, depth + 1, m)
        done[key] = i

    rec(root, 0, '-')
    return cw.lines


def build_disproof(bd, val, root, x_side, dleaf=None):
    """Disproof that x_side wins from root, a position that is not a win for X: X's opponent
    keeps the value out of X's reach, repetitions of an ancestor become r leaves."""
    cw = _CertWriter()
    done = {}
    path = {}
    sys.setrecursionlimit(100000)

    def x_wins(k):
        v = val.get(k, ('d',))[0]
        side = k >> (2 * SHIFT)
        return (v == 'w') if side == x_side else (v == 'l')

    def rec(key, depth, move):
        if key in path:
            cw.add(depth, move, 'r', path[key])
            return
        if key in done:
            cw.add(depth, move, 's', done[key])
            return
        legal = moves_of_key(bd, key)
        side = key >> (2 * SHIFT)
        if not legal:
            i = cw.add(depth, move, 't')
        elif depth > 0 and dleaf and dleaf(key, depth):
            i = cw.add(depth, move, 'd', val.get(key, ('d',))[0])
        else:
            i = cw.add(depth, move, 'i')
            path[key] = i
            if side != x_side:
                good = [m for m in sorted(legal.items()) if not x_wins(m[1])]
                rec(good[0][1], depth + 1, good[0][0])
            else:
                for m, c in sorted(legal.items()):
                    assert not x_wins(c)
                    rec(c, depth + 1, m)
            del path[key]
        done[key] = i

    rec(root, 0, '-')
    return cw.lines


def _header(position, goal, claim, tables=None, version=1):
    return json.dumps({"format": "fanorona-certificate", "version": version, "position": position,
                       "goal": goal, "claim": claim, "tables": tables})


def _depth(line):
    return int(line.split(' ', 1)[0])


def _tag(line):
    return line.split(' ')[2]


def _subtree_end(lines, i):
    """Index just past the subtree of node line i (indices count node lines, header excluded)."""
    d = _depth(lines[i])
    j = i + 1
    while j < len(lines) and _depth(lines[j]) > d:
        j += 1
    return j


def _is_ancestor(lines, a, j):
    return a < j and _subtree_end(lines, a) > j


def _children(lines, i):
    d = _depth(lines[i])
    return [j for j in range(i + 1, _subtree_end(lines, i)) if _depth(lines[j]) == d + 1]


def _select(lines, idxs):
    """The node lines lines[i] for i in idxs (whole subtrees removed or repeated), with every
    'r K' / 's K' renumbered to where node K now is (its first copy), so that a tampered file
    differs from the original only in the intended way."""
    where = {}
    for new_i, old_i in enumerate(idxs):
        where.setdefault(old_i, new_i)
    out = []
    for old_i in idxs:
        parts = lines[old_i].split(' ')
        if parts[2] in ('r', 's'):
            parts[3] = str(where.get(int(parts[3]), int(parts[3])))
        out.append(' '.join(parts))
    return out


def _positions(bd, root, lines):
    """The position key of every node line, replaying the moves from the root."""
    keys, stack = [], []
    for l in lines:
        d, mv = _depth(l), l.split(' ')[1]
        del stack[d:]
        keys.append(root if d == 0 else moves_of_key(bd, stack[-1])[mv])
        stack.append(keys[-1])
    return keys


def _set_arg(line, arg):
    return ' '.join(line.split(' ')[:3] + [str(arg)])


def _expand_shared(lines):
    """The same tree with every 's K' leaf replaced by a copy of K's subtree."""
    out = []
    stack = [(0, 0, '-')]                      # (line index, depth, move), explicit stack
    while stack:
        i, depth, move = stack.pop()
        parts = lines[i].split(' ')
        if parts[2] == 's':
            stack.append((int(parts[3]), depth, move))
            continue
        out.append(' '.join([str(depth), move] + parts[2:]))
        for j in reversed(_children(lines, i)):
            stack.append((j, depth + 1, lines[j].split(' ')[1]))
    return out


def run_selftest():
    t_start = time.time()
    failures = 0
    tmpdir = tempfile.mkdtemp(prefix='cert-selftest-')
    me = os.path.abspath(__file__)

    def expect(name, want, got):
        nonlocal failures
        ok = got == want
        if not ok:
            failures += 1
        print(f"  [{'ok' if ok else 'FAILED'}] {name}" + ("" if ok else f": expected {want}, got {got}"))

    # --- rules on hand-made positions (worked out by hand from RULES.md) ---------------------
    def moves(pos):
        bd, w, b, s = parse_position(pos)
        assert format_position(bd, w, b, s) == pos
        return sorted(moves_of_key(bd, make_key(w, b, s)))

    expect("5x9 start: RULES.md's five first moves",
           ['d2-e3A', 'd3-e3A', 'd3-e3W', 'e2-e3A', 'f2-e3A'],
           moves("BBBBBBBBB/BBBBBBBBB/BWBW.BWBW/WWWWWWWWW/WWWWWWWWW w"))
    expect("3x3 start: four first moves", ['a1-b2A', 'b1-b2A', 'c1-b2A', 'c2-b2A'],
           moves("BBB/B.W/WWW w"))
    # b3 -> c3 approaches d3 and withdraws from a3 at once: two moves.
    expect("approach and withdrawal are two moves", ['b3-c3A', 'b3-c3W'],
           moves("BW.B./...../..... w"))
    # b2-c2W takes a2; c2-d2A would take e2 but repeats the direction east: not allowed.
    expect("no step in the previous step's direction", ['b2-c2W'], moves("...../BW..B/..... w"))
    # White c3 on 5x5 could run c3-d3A-d4A-c4A and then c4-c3A (approaching c2), but c3 is its
    # starting point.  The other chains are withdrawals, each prefix a move of its own.
    expect("no return to a point of this move, prefixes are moves",
           ['c3-c4W', 'c3-c4W-d4W', 'c3-c4W-d4W-c5W', 'c3-c4W-d4W-c5W-b5W', 'c3-c4W-d4W-d3W',
            'c3-d2W', 'c3-d2W-c1W', 'c3-d2W-e2W', 'c3-d2W-e2W-e1W',
            'c3-d3A', 'c3-d3A-d4A', 'c3-d3A-d4A-c4A'],
           moves("...B./.B.../..W.B/..B../..... w"))
    # No capture anywhere: paika moves only, along lines (the centre is strong).
    expect("paika only without captures", ['b2-a2', 'b2-b1', 'b2-b3', 'b2-c2'],
           moves("B.B/.W./B.B w"))
    # A capture removes the whole contiguous enemy line, stopping at an own piece, a gap or
    # the edge: e2-d2A takes c2 and b2 (a2 is Black's own); e2-f2W takes d2 and c2 (b2 is empty,
    # so a2 survives).
    def after(pos, move):
        bd, w, b, s = parse_position(pos)
        res = moves_of_key(bd, make_key(w, b, s))
        return sorted(res), key_text(bd, res[move]) if move in res else None

    expect("approach takes the line up to an own piece",
           (['e2-d2A'], "...../B..B./..... w"), after("...../BWW.B/..... b", 'e2-d2A'))
    expect("withdrawal takes the line up to a gap",
           (['e2-f2W'], "......./W....B./....... w"), after("......./W.WWB../....... b", 'e2-f2W'))

    # --- solve 3x3 exactly ---------------------------------------------------------------------
    bd = board_of(3, 3)
    t0 = time.time()
    val, keys = solve_all(bd)
    print(f"  solved 3x3: {len(keys)} positions, {len(val)} won or lost, {time.time() - t0:.1f} s")
    start = "BBB/B.W/WWW w"
    _, w, b, s = parse_position(start)
    root = make_key(w, b, s)
    expect("3x3 start is a White win", 'w', val.get(root, ('d',))[0])

    def write(name, header, lines, gz=False):
        path = os.path.join(tmpdir, name + ('.gz' if gz else ''))
        data = header + '\n' + ''.join(l + '\n' for l in lines)
        opener = gzip.open if gz else open
        with opener(path, 'wt', encoding='utf-8', newline='\n') as f:
            f.write(data)
        return path

    def run(name, header, lines, want, probe=None, gz=False, contains=None):
        code, msg = check_certificate(write(name, header, lines, gz), probe)
        if contains is not None and contains not in msg:
            code = (code, f"message without {contains!r}")
        expect(f"{name}: {msg}", want, code)
        return msg

    # --- a true proof, then tampered copies ----------------------------------------------------
    proof = build_proof(bd, val, root, 0)
    hp = _header(start, "white wins", "proven")
    print(f"  3x3 proof of 'white wins': {len(proof)} nodes")
    run("proof", hp, proof, 0)
    run("proof-gz", hp, proof, 0, gz=True)
    full = _expand_shared(proof)
    run("proof-without-shared-leaves", hp, full, 0)
    # A partial certificate: an inner node's subtree cut down to an open leaf.
    fi = list(range(len(full)))
    i = next(i for i in fi[1:] if _tag(full[i]) == 'i')
    cut = _select(full, fi[:i + 1] + fi[_subtree_end(full, i):])
    cut[i] = cut[i][:-1] + 'o'
    hpp = hp[:-1] + ', "partial": true}'
    run("partial-open-leaf", hpp, cut, 4, contains="PARTIAL (1 open leaves")
    run("open-leaf-without-partial", hp, cut, 1, contains="partial")
    run("partial-header-without-open-leaves", hpp, full, 0)
    # The same tree also disproves "black wins": White chooses in both.
    run("proof-as-disproof-of-black", _header(start, "black wins", "disproven"), proof, 0)

    all_idx = list(range(len(proof)))
    t = list(proof)
    t[1] = t[1].replace(t[1].split(' ')[1], 'a1-b2', 1)           # paika while captures exist
    run("tamper-illegal-paika", hp, t, 1, contains="not legal")
    t = list(proof)
    mv = t[1].split(' ')[1]
    t[1] = t[1].replace(mv, mv[:-1] + ('W' if mv.endswith('A') else 'A'), 1)
    run("tamper-illegal-capture-kind", hp, t, 1, contains="not legal")
    # Drop the last reply of the first Black-to-move (answering) node with two or more replies.
    i = next(i for i in all_idx if _tag(proof[i]) == 'i' and _depth(proof[i]) % 2 == 1
             and len(_children(proof, i)) >= 2)
    last = _children(proof, i)[-1]
    run("tamper-missing-answer", hp,
        _select(proof, all_idx[:last] + all_idx[_subtree_end(proof, last):]), 1,
        contains="missing")
    e = _subtree_end(proof, 1)                                     # White's move, twice
    run("tamper-duplicate-move", hp, _select(proof, all_idx[:e] + all_idx[1:e] + all_idx[e:]), 1,
        contains="twice")
    i = next(i for i in all_idx[1:] if _tag(proof[i]) == 'i')    # inner node claimed terminal
    t = _select(proof, all_idx[:i + 1] + all_idx[_subtree_end(proof, i):])
    t[i] = t[i][:-1] + 't'
    run("tamper-false-terminal", hp, t, 1, contains="t leaf but")
    t = list(proof)
    i = next(i for i in all_idx if _tag(proof[i]) == 't')        # terminal claimed inner
    t[i] = t[i][:-1] + 'i'
    run("tamper-terminal-as-inner", hp, t, 1, contains="no legal move")
    run("tamper-claim-disproven", _header(start, "white wins", "disproven"), proof, 1)
    run("tamper-goal-black", _header(start, "black wins", "proven"), proof, 1)
    t = list(proof)
    t[2] = str(_depth(t[2]) + 1) + ' ' + t[2].split(' ', 1)[1]
    run("tamper-depth-jump", hp, t, 1, contains="depth")
    run("tamper-second-root", hp, proof + ["0 - t"], 1, contains="second root")
    t = list(proof)
    i = next(i for i in all_idx if _tag(proof[i]) == 't')
    t[i] = _set_arg(t[i][:-1] + 'r', 0)
    run("tamper-r-in-proof", hp, t, 1, contains="r leaf in a proof")
    j = next((i for i in all_idx if _tag(proof[i]) == 's'), None)
    if j is None:
        expect("the proof has shared leaves to tamper with", True, False)
    else:
        t = list(proof)
        t[j] = _set_arg(t[j], 0)
        run("tamper-s-to-ancestor", hp, t, 1, contains="ancestor")
        other = next(q for q in range(1, j) if not _is_ancestor(proof, q, j)
                     and proof[q] != proof[int(proof[j].split(' ')[3])] and _tag(proof[q]) != 's'
                     and q != int(proof[j].split(' ')[3]))
        t[j] = _set_arg(t[j], other)
        run("tamper-s-wrong-position", hp, t, 1, contains="differs")
        t[j] = _set_arg(t[j], j + 1)
        run("tamper-s-forward", hp, t, 1, contains="earlier")
        t = list(proof)
        t[j] = t[j].rsplit(' ', 1)[0] + ' 01'
        run("tamper-s-leading-zero", hp, t, 1, contains="node number")

    # --- unreadable files ------------------------------------------------------------------------
    run("bad-version", _header(start, "white wins", "proven", version=2), proof, 2,
        contains="unknown version")
    run("bad-header-json", '{"format": "fanorona-certificate", ', proof, 2)
    run("bad-header-position", _header("BBB/B.W/WW w", "white wins", "proven"), proof, 2)
    run("bad-header-goal", _header(start, "white draws", "proven"), proof, 2)
    path = write("proof-cut", hp, proof, gz=True)
    with open(path, 'rb') as f:
        data = f.read()
    with open(path, 'wb') as f:
        f.write(data[:len(data) * 2 // 3])
    code, msg = check_certificate(path)
    expect(f"truncated gzip: {msg}", 2, code)
    path = write("notgz", hp, proof)
    os.rename(path, path + '.gz')
    code, msg = check_certificate(path + '.gz')
    expect(f"not gzip: {msg}", 2, code)
    path = write("cut", hp, proof)
    with open(path, 'rb+') as f:
        f.truncate(os.path.getsize(path) - 3)
    code, msg = check_certificate(path)
    expect(f"cut mid-line: {msg}", 2, code)
    i = next(i for i in all_idx[1:] if _tag(proof[i]) == 'i')
    run("ends-after-inner", hp, proof[:i + 1], 2, contains="truncated")

    # --- a disproof that needs repetition leaves ----------------------------------------------
    found = None
    for k in keys:
        if k in val:
            continue                                  # want a drawn position
        wt, bl, sd = split_key(k)
        if bin(wt).count('1') < 2 or bin(bl).count('1') < 2:
            continue
        lines = build_disproof(bd, val, k, sd)
        if any(_tag(l) == 'r' for l in lines):
            found = (k, lines)
            break
    if found is None:
        expect("a drawn 3x3 position whose disproof repeats", True, False)
    else:
        k, dis = found
        goal = "white wins" if k >> (2 * SHIFT) == 0 else "black wins"
        hd = _header(key_text(bd, k), goal, "disproven")
        print(f"  3x3 disproof of '{goal}' from {key_text(bd, k)}: {len(dis)} nodes, "
              f"{sum(_tag(l) == 'r' for l in dis)} r leaves")
        run("disproof-with-r", hd, dis, 0)
        run("disproof-claimed-as-proof", _header(key_text(bd, k), goal, "proven"), dis, 1)
        j = next(q for q in range(len(dis)) if _tag(dis[q]) == 'r')
        nonanc = next(q for q in range(1, j) if not _is_ancestor(dis, q, j))
        t = list(dis)
        t[j] = _set_arg(t[j], nonanc)
        run("tamper-r-not-ancestor", hd, t, 1, contains="not an ancestor")
        wrong = next(q for q in range(j) if _is_ancestor(dis, q, j)
                     and q != int(dis[j].split(' ')[3]))
        t[j] = _set_arg(t[j], wrong)
        run("tamper-r-wrong-position", hd, t, 1, contains="differs")

    # --- d leaves, checked through a probe command ---------------------------------------------
    # The "tables" are the exact 3x3 solution in a text file; the probe command is this script
    # in --table-probe mode, so the whole batch/pipe path is exercised.
    table_path = os.path.join(tmpdir, 'table-3x3.txt')
    with open(table_path, 'w', encoding='utf-8') as f:
        for k in keys:
            f.write(f"{key_text(bd, k)} {val.get(k, ('d',))[0]}\n")
    probe = f"{sys.executable} {me} --table-probe {table_path}"

    def pieces(k):
        return bin(k & ((1 << (2 * SHIFT)) - 1)).count('1')

    # The 3x3 proof is narrow (White's answers are forced), so it gets one d leaf; it serves the
    # header and claim checks.  The drawn disproof is wider and gets several, for the table checks.
    dproof = build_proof(bd, val, root, 0, dleaf=lambda k, depth: depth >= 3)
    print(f"  3x3 proof with d leaves from depth 3: {len(dproof)} nodes, "
          f"{sum(_tag(l) == 'd' for l in dproof)} d leaves")
    most = max(pieces(k) for k, l in zip(_positions(bd, root, dproof), dproof) if _tag(l) == 'd')
    htab = _header(start, "white wins", "proven", {"board": "3x3", "pieces": most})
    run("dproof", htab, dproof, 0, probe=probe)
    run("dproof-no-probe", htab, dproof, 3, contains="--probe")
    run("dproof-tables-null", hp, dproof, 1, probe=probe, contains="null")
    run("dproof-too-few-pieces", _header(start, "white wins", "proven",
                                         {"board": "3x3", "pieces": most - 1}), dproof, 1,
        probe=probe,
        contains="pieces")
    run("dproof-wrong-board", _header(start, "white wins", "proven",
                                      {"board": "3x5", "pieces": most}), dproof, 1, probe=probe)
    t = list(dproof)
    j = next(q for q in range(len(t)) if _tag(t[q]) == 'd')
    t[j] = _set_arg(t[j], 'd')
    run("tamper-d-value-vs-claim", htab, t, 1, probe=probe, contains="not a win for X")
    run("probe-failing", htab, dproof, 3, probe="exit 7", contains="status 7")
    run("probe-unknown-position", htab, dproof, 1,
        probe=f"{sys.executable} {me} --table-probe /dev/null", contains="do not hold")

    if found is not None:
        k, _ = found
        x = k >> (2 * SHIFT)
        ddis = build_disproof(bd, val, k, x, dleaf=lambda kk, depth: depth >= 3)
        dl = [q for q in range(len(ddis)) if _tag(ddis[q]) == 'd']
        print(f"  3x3 disproof with d leaves from depth 3: {len(ddis)} nodes, {len(dl)} d leaves")
        hdd = _header(key_text(bd, k), "white wins" if x == 0 else "black wins", "disproven",
                      {"board": "3x3", "pieces": max(pieces(k), 3)})
        run("ddisproof", hdd, ddis, 0, probe=probe)
        code, msg = check_certificate(write("ddisproof-chunks", hdd, ddis), probe, chunk=3)
        expect(f"ddisproof probed 3 leaves per run: {msg}", 0, code)
        # A d leaf turned from a win into a draw for the side to move: still not a win for X
        # (X's opponent is to move at a 'w' leaf of a disproof), so only the tables reject it.
        j = [q for q in dl if ddis[q].endswith(' w')][-1]     # in the last batch of 3
        t = list(ddis)
        t[j] = _set_arg(t[j], 'd')
        run("tamper-d-value-vs-tables", hdd, t, 1, probe=probe, contains="tables say")
        code, msg = check_certificate(write("tamper-d-chunks", hdd, t), probe, chunk=3)
        expect(f"tamper-d-value-vs-tables, batches of 3: {msg}", (1, f"line {j + 2}:"),
               (code, msg.split(' ', 1)[1][:len(f"line {j + 2}:")]))

    shutil.rmtree(tmpdir, ignore_errors=True)
    print(f"selftest: {'PASS' if failures == 0 else f'{failures} FAILED'} "
          f"({time.time() - t_start:.1f} s)")
    return 0 if failures == 0 else 1


# --------------------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description="Independent checker of Fanorona proof "
                                             "certificates (format 1).")
    ap.add_argument('cert', nargs='?', help="certificate file (.gz for gzip)")
    ap.add_argument('--probe', help="endgame-table probe command: positions on stdin, one "
                                    "'w'/'d'/'l'/'-' line each on stdout")
    ap.add_argument('--chunk', type=int, default=1_000_000,
                    help="d leaves per probe run (default 1000000)")
    ap.add_argument('--progress', action='store_true', help="progress every million nodes on stderr")
    ap.add_argument('--perft', metavar='TSV', help="check the move generator against a perft file")
    ap.add_argument('--max-count', type=int, default=2_000_000,
                    help="--perft: skip rows whose count is above this (default 2000000)")
    ap.add_argument('--selftest', action='store_true', help="run the built-in tests")
    ap.add_argument('--table-probe', metavar='FILE', help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.table_probe:
        return table_probe(a.table_probe)
    if a.perft:
        return run_perft(a.perft, a.max_count)
    if a.selftest:
        return run_selftest()
    if not a.cert:
        ap.error("give a certificate, --perft or --selftest")
    code, msg = check_certificate(a.cert, a.probe, max(1, a.chunk), a.progress)
    print(msg)
    return code


if __name__ == '__main__':
    sys.exit(main())
