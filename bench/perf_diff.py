"""perf samples per 1,000 answered requests, per symbol, of the two builds in a
bench/perf_ab.sh folder: the total, then the symbols that grew and shrank most.

    python3 bench/perf_diff.py OUT [N]
"""
import collections
import glob
import json
import re
import subprocess
import sys


def load(folder, build):
    counts, answered = collections.Counter(), 0
    for data in sorted(glob.glob(f'{folder}/perf-{build}-*.data')):
        rnd = data.rsplit('-', 1)[1].split('.')[0]
        oha = json.load(open(f'{folder}/oha-{build}-{rnd}.json'))
        answered += (oha.get('statusCodeDistribution') or {}).get('200', 0)
        report = subprocess.run(['perf', 'report', '-i', data, '-n', '--no-children', '--sort', 'symbol',
                                 '-g', 'none', '--stdio', '--percent-limit', '0'],
                                capture_output=True, text=True).stdout
        for line in report.splitlines():
            m = re.match(r'\s*[\d.]+%\s+(\d+)\s+\[.\]\s+(.*?)\s*$', line)
            if m:
                counts[re.split(r'\s{2,}', m.group(2).strip())[0]] += int(m.group(1))
    return counts, answered


def main():
    folder = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    (b, nb), (a, na) = load(folder, 'before'), load(folder, 'after')
    per_b = {k: v * 1000 / nb for k, v in b.items()}
    per_a = {k: v * 1000 / na for k, v in a.items()}
    tb, ta = sum(per_b.values()), sum(per_a.values())
    print(f'samples per 1,000 requests: before {tb:.1f}, after {ta:.1f} ({ta - tb:+.1f}, {100 * (ta / tb - 1):+.1f} %); '
          f'requests {nb} / {na}')
    rows = sorted(((per_a.get(k, 0) - per_b.get(k, 0), per_b.get(k, 0), per_a.get(k, 0), k)
                   for k in set(per_a) | set(per_b)), reverse=True)
    print('grew most (change, before, after; per 1,000 requests):')
    for d, x, y, k in rows[:n]:
        print(f'  {d:+6.2f} {x:6.2f} {y:6.2f}  {k[:140]}')
    print('shrank most:')
    for d, x, y, k in rows[-10:]:
        print(f'  {d:+6.2f} {x:6.2f} {y:6.2f}  {k[:140]}')


main()
