"""bench/cgdiff.py BEFORE AFTER N [yes|no]: per-request instruction deltas by function between two
callgrind profiles of bench/callgrind.sh (N requests each); "yes" compares inclusive costs."""
import subprocess, sys, re, collections
def load(path, incl):
    out = subprocess.run(['callgrind_annotate', f'--inclusive={incl}', '--threshold=100', path], capture_output=True, text=True).stdout
    d = collections.Counter()
    for line in out.splitlines():
        m = re.match(r'\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$', line)
        if m:
            name = re.sub(r'::h[0-9a-f]{16}', '', m.group(2))
            name = re.sub(r'^[^:]*:', '', name, count=1) if name.startswith('/') or name.startswith('???') else name
            name = re.sub(r' \[[^\]]*\]$', '', name)
            d[name] += int(m.group(1).replace(',', ''))
    return d
a, b, n, incl = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else 'no'
A, B = load(a, incl), load(b, incl)
keys = set(A) | set(B)
rows = sorted(keys, key=lambda k: -(B[k] - A[k]))
print('delta/req  before/req  after/req  fn')
for k in rows[:40]:
    print(f'{(B[k]-A[k])/n:9.0f} {A[k]/n:10.0f} {B[k]/n:10.0f}  {k[:150]}')
print('...most negative')
for k in rows[-15:]:
    print(f'{(B[k]-A[k])/n:9.0f} {A[k]/n:10.0f} {B[k]/n:10.0f}  {k[:150]}')
