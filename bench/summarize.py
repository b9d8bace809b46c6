#!/usr/bin/env python3
"""Turn a bench/run.sh results folder into markdown: the peers-bench tables (medians),
switchboard's response checks and oha sanity, the RSS-over-time check, and the ratios
of the performance targets with PASS/FAIL.

Usage: summarize.py RESULTS_DIR
runs.tsv columns: server, kind, rep, oha_json, server_cpu_pct, vmhwm_kB, vmrss_kB
(the table part is the same computation as /work/shared/peers-bench/summarize.py)
"""

import csv
import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def med(xs):
    return statistics.median(xs) if xs else float('nan')


def oha_stats(d):
    s, p = d['summary'], d['latencyPercentiles']
    codes = d.get('statusCodeDistribution', {}) or {}
    ok = codes.get('200', 0)
    bad = sum(v for k, v in codes.items() if k != '200')
    errs = {
        k: v
        for k, v in (d.get('errorDistribution') or {}).items()
        if 'deadline' not in k  # in-flight requests cut at -z end are normal
    }
    cut = sum(v for k, v in (d.get('errorDistribution') or {}).items() if 'deadline' in k)
    return dict(
        rps=s['requestsPerSec'] or 0.0,
        p50=(p['p50'] or 0) * 1e3,
        p99=(p['p99'] or 0) * 1e3,
        size=s['sizePerRequest'],
        ok=ok,
        codes=codes,
        errs=errs,
        cut=cut,
        bad=bad + sum(errs.values()),
    )


def load(out: Path):
    runs = defaultdict(list)
    with open(out / 'runs.tsv') as f:
        for row in csv.reader(f, delimiter='\t'):
            name, kind, rep, path, cpu, hwm, rss = row[:7]
            d = json.load(open(out / Path(path).name))
            r = oha_stats(d)
            r.update(rep=rep, cpu=float(cpu), hwm=int(hwm) / 1024, rss=int(rss) / 1024)
            # newer run.sh: whole-machine busy % and oha's own CPU % during the load
            r.update(busy=float(row[7]) if len(row) > 7 else None, oha=float(row[8]) if len(row) > 8 else None)
            runs[(name, kind)].append(r)

    def kv(fname):
        p = out / fname
        if not p.exists():
            return {}
        return {r[0]: int(r[1]) / 1024 for r in csv.reader(open(p), delimiter='\t') if r}

    return runs, kv('idle.tsv'), kv('after.tsv')


def f(x, d=1):
    return 'n/a' if x is None or x != x else f'{x:,.{d}f}'


def tables(out, runs, idle, after):
    servers = list(dict.fromkeys(name for name, _ in runs))
    print(f'Results: {out}  (medians of {max(len(v) for v in runs.values())} runs; '
          'CPU % = server process CPU time / wall time, 100 % = one core; '
          'CPU µs/req = server CPU time per completed request)\n')
    print('Unary SendMessage, 64 connections')
    print()
    print('| server | req/s | p50 ms | p99 ms | server CPU % | CPU µs/req | peak RSS MiB (load) | idle RSS MiB | RSS after all loads MiB | 1-conn p50 ms | bytes/resp | failed |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for s in servers:
        u = runs.get((s, 'unary'), [])
        u1 = runs.get((s, 'unary-1c'), [])
        if not u:
            continue
        print(
            f"| {s} | {f(med([r['rps'] for r in u]), 0)} | {f(med([r['p50'] for r in u]), 2)} "
            f"| {f(med([r['p99'] for r in u]), 2)} | {f(med([r['cpu'] for r in u]), 0)} "
            f"| {f(med([1e4 * r['cpu'] / r['rps'] for r in u if r['rps']]), 0)} | {f(med([r['hwm'] for r in u]))} | {f(idle.get(s, float('nan')))} "
            f"| {f(after.get(s, float('nan')))} | {f(med([r['p50'] for r in u1]), 2)} "
            f"| {u[0]['size']} | {sum(r['bad'] for r in u + u1)} |"
        )
    st = [s for s in servers if (s, 'stream') in runs]
    if st:
        print()
        print('Streaming SendStreamingMessage (SSE; one request = whole stream)')
        print()
        print('| server | 1-stream p50 ms (1 conn) | 1-stream p99 ms | streams/s (64 conn) | p50 ms | p99 ms | server CPU % | CPU µs/stream | peak RSS MiB | bytes/stream | failed |')
        print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
        for s in st:
            r1 = runs.get((s, 'stream-1c'), [])
            r = runs[(s, 'stream')]
            print(
                f"| {s} | {f(med([x['p50'] for x in r1]), 2)} | {f(med([x['p99'] for x in r1]), 2)} "
                f"| {f(med([x['rps'] for x in r]), 0)} | {f(med([x['p50'] for x in r]), 2)} "
                f"| {f(med([x['p99'] for x in r]), 2)} | {f(med([x['cpu'] for x in r]), 0)} "
                f"| {f(med([1e4 * x['cpu'] / x['rps'] for x in r if x['rps']]), 0)} | {f(med([x['hwm'] for x in r]))} | {r[0]['size']} | {sum(x['bad'] for x in r + r1)} |"
            )
    return servers


def noise(runs):
    """Whole-machine CPU during the 64-connection loads, split into server, oha and everything else."""
    rows = [(k, v) for k, v in runs.items() if k[1] in ('unary', 'stream') and v and v[0].get('busy') is not None]
    if not rows:
        return
    print()
    print('CPU during the 64-connection loads (medians; 100 % = one core, the machine has 200 %). '
          '"other" = machine busy − server − oha: anything else running on the machine (noise).')
    print()
    print('| server | load | machine busy % | server % | oha % | other % |')
    print('|---|---|---:|---:|---:|---:|')
    for (name, kind), v in rows:
        b, c, o = med([x['busy'] for x in v]), med([x['cpu'] for x in v]), med([x['oha'] for x in v])
        oth = med([x['busy'] - x['cpu'] - x['oha'] for x in v])
        print(f'| {name} | {kind} | {f(b, 0)} | {f(c, 0)} | {f(o, 0)} | {f(oth, 0)} |')


def sb_sanity(out, runs):
    sb = [(k, v) for k, v in runs.items() if k[0].startswith(('sb-', 'sbb-'))]
    checks = (out / 'checks.txt').read_text().strip() if (out / 'checks.txt').exists() else ''
    if not sb and not checks:
        return
    print()
    print('switchboard answers (saved per server: *.unary-response.json, *.stream-response.txt, *.agent-card.json)')
    print()
    for line in checks.splitlines():
        print(f'- {line}')
    print()
    print('| sb run | requests 200 | other status | errors (excl. -z cut-offs) | cut at -z end | bytes/req |')
    print('|---|---:|---:|---:|---:|---:|')
    for (name, kind), rs in sorted(sb):
        for i, r in enumerate(rs, 1):
            other = {k: v for k, v in r['codes'].items() if k != '200'}
            print(f"| {name} {kind} #{i} | {r['ok']:,} | {other or 0} | {r['errs'] or 0} | {r['cut']} | {r['size']} |")
    for name in ('sb-task-sqlite', 'sbb-task-sqlite'):
        db = out / f'{name}.db-size.txt'
        if db.exists():
            print()
            print(f'{name} database after its runs: ' + '; '.join(l.strip() for l in db.read_text().splitlines() if l.strip()))


BINDINGS = (('JSON-RPC', 'sb-task'), ('HTTP+JSON (REST)', 'sb-rest-task'), ('gRPC', 'sb-grpc-task'))


def bindings(out, runs):
    """sb-task's server driven over each binding (unary SendMessage, same run), and the task-count check."""
    have = [(b, s) for b, s in BINDINGS if (s, 'unary') in runs]
    if len(have) < 2:
        return
    print()
    print('Bindings: the same server (memory store, echo-task) and message over each binding, '
          'unary SendMessage at 64 connections (JSON-RPC and REST: HTTP/1.1 keep-alive; gRPC: HTTP/2 h2c, '
          'one request in flight per connection)')
    print()
    print('| binding | row | req/s | p50 ms | p99 ms | CPU µs/req | ÷ JSON-RPC req/s |')
    print('|---|---|---:|---:|---:|---:|---:|')
    base = med([r['rps'] for r in runs.get(('sb-task', 'unary'), [])]) if ('sb-task', 'unary') in runs else None
    for b, s in have:
        u = runs[(s, 'unary')]
        rps = med([r['rps'] for r in u])
        ratio = rps / base if base else None
        print(f"| {b} | {s} | {f(rps, 0)} | {f(med([r['p50'] for r in u]), 2)} | {f(med([r['p99'] for r in u]), 2)} "
              f"| {f(med([1e4 * r['cpu'] / r['rps'] for r in u if r['rps']]), 0)} | {f(ratio, 2)} |")
    counts = out / 'counts.tsv'
    rows = [r for r in csv.reader(open(counts), delimiter='\t') if r] if counts.exists() else []
    if rows:
        print()
        print('Task-count check (oha counts HTTP 200s only; a gRPC error is a 200 with a non-zero grpc-status '
              'trailer): a bounded load of N requests before the warm-up; the server must hold exactly N more tasks '
              '(ListTasks totalSize).')
        print()
        print('| row | requests | oha 200s | tasks created | verdict |')
        print('|---|---:|---:|---:|---|')
        for name, n, ok, made in rows:
            v = 'OK' if n == ok == made else 'MISMATCH'
            print(f'| {name} | {n} | {ok} | {made} | {v} |')


def rss_over_time(out):
    env = (out / 'env.txt').read_text() if (out / 'env.txt').exists() else ''
    m = re.search(r'RSS_WARM=(\d+)', env)
    warm = int(m.group(1)) if m else 10
    res = {}
    files = sorted(out.glob('rss-*.tsv'))
    if not files:
        return res
    print()
    print(f'RSS over time: fresh process, sustained unary SendMessage at 64 connections, VmRSS sampled every 1 s '
          f'(baseline = first sample at t ≥ {warm} s of load; ratio = end / baseline)')
    print()
    print('| server | requests (200) | req/s | RSS idle before load MiB | RSS at 1 s MiB | baseline (t=%d s) MiB | max MiB | end MiB | 1 s after load MiB | end / baseline | KiB per request after baseline | failed |' % warm)
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for p in files:
        name = p.name[len('rss-'):-len('.tsv')]
        rows = list(csv.reader(open(p), delimiter='\t'))[1:]
        start = next((int(r[1]) for r in rows if r[0] == 'start'), None)
        aft = next((int(r[1]) for r in rows if r[0] == 'after'), None)
        samples = [(int(r[0]), int(r[1])) for r in rows if r[0].isdigit() and r[1]]
        if not samples:
            continue
        base = next(((t, v) for t, v in samples if t >= warm), samples[-1])
        end = samples[-1]
        mx = max(v for _, v in samples)
        oj = out / f'rss-{name}.oha.json'
        st = oha_stats(json.load(open(oj))) if oj.exists() else None
        reqs = st['ok'] if st else 0
        rps = st['rps'] if st else float('nan')
        ratio = end[1] / base[1] if base[1] else float('nan')
        per_req = ((end[1] - base[1]) / (rps * (end[0] - base[0]))) if st and rps and end[0] > base[0] else float('nan')
        res[name] = dict(ratio=ratio, base=base, end=end, start=start, max=mx, samples=len(samples))
        print(f"| {name} | {reqs:,} | {f(rps, 0)} | {f(start / 1024 if start else None)} | {f(samples[0][1] / 1024)} "
              f"| {f(base[1] / 1024)} | {f(mx / 1024)} | {f(end[1] / 1024)} (t={end[0]} s) | {f(aft / 1024 if aft else None)} "
              f"| {f(ratio, 3)} | {f(per_req, 3)} | {st['bad'] if st else 'n/a'} |")
    return res


def ratios(out, runs, rss):
    def rps(name, kind='unary'):
        return med([r['rps'] for r in runs.get((name, kind), [])]) if (name, kind) in runs else None

    def cpu_us(name, kind='unary'):
        rs = runs.get((name, kind), [])
        return med([1e4 * r['cpu'] / r['rps'] for r in rs if r['rps']]) if rs else None

    print()
    print('Targets (ratios of medians within this run)')
    print()
    print('| target | numerator | denominator | ratio | goal | verdict | info: CPU µs/req num / den |')
    print('|---|---|---|---:|---|---|---|')
    lines = []

    def row(label, num, den, goal_txt, ok_fn, kind='unary'):
        n, d = rps(num, kind) if num else None, rps(den, kind) if den else None
        if n is None or d is None or not d:
            verdict, r = 'NOT MEASURED', None
        else:
            r = n / d
            verdict = 'measured' if goal_txt == '(no goal)' else ('PASS' if ok_fn(r) else 'FAIL')
        # Noise flag: another process used > 25 % of a core during these loads (median).
        noisy = []
        for nm in (num, den):
            rs = runs.get((nm, kind), []) if nm else []
            if rs and rs[0].get('busy') is not None:
                o = med([x['busy'] - x['cpu'] - x['oha'] for x in rs])
                if o > 25:
                    noisy.append(f'{nm} other {o:.0f} %')
        if noisy and r is not None:
            verdict += ' (NOISY: ' + ', '.join(noisy) + ')'
        unit = 'streams/s' if kind == 'stream' else 'req/s'
        cu = f"{f(cpu_us(num, kind), 0)} / {f(cpu_us(den, kind), 0)}" if n is not None and d is not None else ''
        print(f"| {label} | {num} {f(n, 0)} {unit} | {den or '—'} {f(d, 0)} | {f(r, 2)} | {goal_txt} | {verdict} | {cu} |")
        lines.append(f'{label}: {f(r, 2)} ({goal_txt}) {verdict}')

    raw = 'raw-message' if ('raw-message', 'unary') in runs else ('raw' if ('raw', 'unary') in runs else None)
    row('(a) sb-message unary ÷ raw' + (' (message-shaped)' if raw == 'raw-message' else ' (task-shaped)'),
        'sb-message', raw, '≥ 0.5', lambda r: r >= 0.5)
    rust = [s for s in ('rs-lf-nd-task', 'rs-tt-task') if (s, 'unary') in runs]
    best_rust = max(rust, key=lambda s: rps(s)) if rust else None
    row('(b) sb-task unary ÷ best Rust SDK task peer', 'sb-task', best_rust, '≥ 1.5', lambda r: r >= 1.5)
    row('(c) sb-task-sqlite unary ÷ best Rust SDK task peer', 'sb-task-sqlite', best_rust, '≥ 0.5', lambda r: r >= 0.5)
    if ('sb-task-pg', 'unary') in runs:
        row('(info) sb-task-pg unary ÷ best Rust SDK task peer', 'sb-task-pg', best_rust, '(no goal)', lambda r: True)
    peers_t = [k[0] for k in runs if k[1] == 'stream' and k[0].endswith('-task') and not k[0].startswith(('sb-', 'sbb-'))]
    best_st = max(peers_t, key=lambda s: rps(s, 'stream')) if peers_t else None
    row('(d) sb-task streams/s ÷ best task-mode peer', 'sb-task', best_st, '≥ 1.2', lambda r: r >= 1.2, kind='stream')
    e = rss.get('sb-task')
    if e:
        ok = 0.9 <= e['ratio'] <= 1.1
        v = 'PASS' if ok else 'FAIL'
        print(f"| (e) sb-task RSS end ÷ baseline (sustained load) | end {f(e['end'][1] / 1024)} MiB (t={e['end'][0]} s) "
              f"| baseline {f(e['base'][1] / 1024)} MiB (t={e['base'][0]} s) | {f(e['ratio'], 3)} | 0.9–1.1 | {v} | |")
        lines.append(f"(e) sb-task RSS end/baseline: {f(e['ratio'], 3)} (0.9–1.1) {v}")
    else:
        print('| (e) sb-task RSS end ÷ baseline | — | — | n/a | 0.9–1.1 | NOT MEASURED | |')
        lines.append('(e) sb-task RSS end/baseline: NOT MEASURED')
    h2 = h2load_bindings(out)
    if h2 and 'grpc' in h2 and 'jsonrpc' in h2:
        (g, gs), (j, js) = h2['grpc'], h2['jsonrpc']
        r = g / j
        v = 'PASS' if r >= 0.8 else 'FAIL'
        print(f"| (f) gRPC unary ÷ JSON-RPC unary, one load generator (h2load, bindings/table.md) | grpc {f(g, 0)} req/s "
              f"| jsonrpc {f(j, 0)} | {f(r, 2)} | ≥ 0.8 (within 20 %) | {v} | {f(gs, 0)} / {f(js, 0)} |")
        lines.append(f'(f) gRPC/JSON-RPC unary (h2load): {f(r, 2)} (≥ 0.8) {v}')
    elif ('sb-grpc-task', 'unary') in runs:
        print('| (f) gRPC unary ÷ JSON-RPC unary, one load generator (h2load) | — | — | n/a | ≥ 0.8 | NOT MEASURED | |')
        lines.append('(f) gRPC/JSON-RPC unary (h2load): NOT MEASURED')
    if ('sb-grpc-task', 'unary') in runs:
        # With oha the client's own HTTP/2 cost (~1.6x its HTTP/1.1 cost per request) comes out of
        # the server's share of the 2 cores: information, not the goal (see bench/bindings.sh).
        row('(info) sb-grpc-task unary ÷ sb-task (JSON-RPC) unary, both driven by oha', 'sb-grpc-task', 'sb-task',
            '(no goal)', lambda r: True)
    l2 = rss.get('rs-lf-nd-task')
    if l2:
        print(f"| info: rs-lf-nd-task RSS end ÷ baseline | end {f(l2['end'][1] / 1024)} MiB | baseline {f(l2['base'][1] / 1024)} MiB "
              f"| {f(l2['ratio'], 3)} | (no goal) | | |")
    print()
    for l in lines:
        print(l)


def goal_ratios(out, runs, rss, p):
    """Every ratio goal of switchboard build `p` ('sb' = SB, 'sbb' = SB_BEFORE):
    {goal: (ratio, noisy rows, twin)}. twin = (row without its prefix, load kind) when the goal's
    change between builds is that row's alone (its denominator is a peer, the same for both)."""
    def rps(name, kind='unary'):
        rs = runs.get((name, kind), [])
        return med([r['rps'] for r in rs]) if rs else None

    def other(name, kind):
        rs = runs.get((name, kind), [])
        if not rs or rs[0].get('busy') is None:
            return None
        return med([x['busy'] - x['cpu'] - x['oha'] for x in rs])

    def ratio(num, den, kind='unary'):
        n, d = rps(num, kind) if num else None, rps(den, kind) if den else None
        if n is None or not d:
            return None
        noisy = [f'{nm} other {o:.0f} %' for nm in (num, den) if (o := other(nm, kind)) is not None and o > 25]
        twin = None if den.startswith(f'{p}-') else (num.removeprefix(f'{p}-'), kind)
        return n / d, noisy, twin

    raw = 'raw-message' if ('raw-message', 'unary') in runs else ('raw' if ('raw', 'unary') in runs else None)
    rust = [s for s in ('rs-lf-nd-task', 'rs-tt-task') if (s, 'unary') in runs]
    best_rust = max(rust, key=lambda s: rps(s)) if rust else None
    peers_t = [k[0] for k in runs if k[1] == 'stream' and k[0].endswith('-task') and not k[0].startswith(('sb-', 'sbb-'))]
    best_st = max(peers_t, key=lambda s: rps(s, 'stream')) if peers_t else None
    g = {
        '(a) message unary ÷ raw (≥ 0.5)': ratio(f'{p}-message', raw),
        '(b) task unary ÷ best Rust peer (≥ 1.5)': ratio(f'{p}-task', best_rust),
        '(c) task-sqlite unary ÷ best Rust peer (≥ 0.5)': ratio(f'{p}-task-sqlite', best_rust),
        '(d) task streams/s ÷ best task peer (≥ 1.2)': ratio(f'{p}-task', best_st, 'stream'),
    }
    e = rss.get(f'{p}-task')
    g['(e) task RSS end ÷ baseline (0.9–1.1)'] = (e['ratio'], [], None) if e else None
    h2 = h2load_bindings(out, 'bindings' if p == 'sb' else 'bindings-before')
    g['(f) gRPC ÷ JSON-RPC unary, h2load (≥ 0.8)'] = (h2['grpc'][0] / h2['jsonrpc'][0], [], None) \
        if h2 and 'grpc' in h2 and 'jsonrpc' in h2 else None
    g['(info) gRPC ÷ JSON-RPC unary, oha'] = ratio(f'{p}-grpc-task', f'{p}-task')
    g['(info) task-pg unary ÷ best Rust peer'] = ratio(f'{p}-task-pg', best_rust)
    return g


def paired_changes(out, runs):
    """{(row, kind): [after ÷ before per rep]} for the rows run.sh ran beside their twin (pairs.tsv)."""
    pairs = out / 'pairs.tsv'
    if not pairs.exists():
        return {}
    paired = {r.removeprefix('sbb-').removeprefix('sb-')
              for row in csv.reader(open(pairs), delimiter='\t') for r in row if r}
    res = {}
    for row in paired:
        for kind in ('unary', 'stream'):
            before = {r['rep']: r['rps'] for r in runs.get((f'sbb-{row}', kind), [])}
            res[(row, kind)] = [r['rps'] / before[r['rep']]
                                for r in runs.get((f'sb-{row}', kind), []) if before.get(r['rep'])]
    return res


def before_after(out, runs, rss):
    """With SB_BEFORE rows (sbb-*): every ratio goal for both builds, from this one run."""
    if not any(k[0].startswith('sbb-') for k in runs):
        return
    before, after = goal_ratios(out, runs, rss, 'sbb'), goal_ratios(out, runs, rss, 'sb')
    paired = paired_changes(out, runs)
    print()
    print('Before (sbb-*, SB_BEFORE) / after (sb-*, SB): each ratio goal, both measured in this run '
          '(change = after ÷ before − 1; acceptance of issue 16: no goal drops by more than 5 %)')
    if paired:
        print('Paired rows (run.sh PAIRED=1: both builds up at once, reps alternating ABBA): "paired change" '
              '= median over reps of after ÷ before − 1, each ratio from two back-to-back measurements; '
              'the steadier read on a shared machine.')
    print()
    print('| goal | before | after | change | paired change (per-rep range) | noise (other > 25 % of a core) |')
    print('|---|---:|---:|---:|---:|---|')
    for k in after:
        b, a = before.get(k), after.get(k)
        if b is None and a is None:
            continue
        ch = f'{100 * (a[0] / b[0] - 1):+.1f} %' if a and b and b[0] else 'n/a'
        rs = paired.get(a[2], []) if a and a[2] else []
        pc = (f'{100 * (med(rs) - 1):+.1f} % ({100 * (min(rs) - 1):+.0f} … {100 * (max(rs) - 1):+.0f} %)'
              if rs else '')
        noisy = ', '.join((b[1] if b else []) + (a[1] if a else [])) or ''
        print(f"| {k} | {f(b[0], 3) if b else 'n/a'} | {f(a[0], 3) if a else 'n/a'} | {ch} | {pc} | {noisy} |")


def h2load_bindings(out, sub='bindings'):
    """{kind: (median req/s, median server CPU µs/req)} from bench/bindings.sh's run in OUT/<sub>."""
    tsv = out / sub / 'bindings.tsv'
    if not tsv.exists():
        return None
    rows = list(csv.DictReader(open(tsv), delimiter='\t'))
    res = {}
    for k in sorted({r['kind'] for r in rows}):
        rs = [r for r in rows if r['kind'] == k and float(r['req_s'] or 0) > 0]
        if rs:
            res[k] = (med([float(r['req_s']) for r in rs]),
                      med([1e6 * float(r['server_cpu_s']) / (float(r['req_s']) * float(r['secs'])) for r in rs]))
    return res


def print_h2load_table(out):
    t = out / 'bindings' / 'table.md'
    if t.exists():
        print()
        print('Bindings with one load generator (bench/bindings.sh: h2load drives all three bindings; JSON-RPC and REST '
              'over HTTP/1.1, gRPC over h2c; 64 requests in flight; medians of 3 runs):')
        print()
        print(t.read_text().rstrip())


def main():
    out = Path(sys.argv[1])
    env = out / 'env.txt'
    if env.exists():
        print('```')
        print(env.read_text().rstrip())
        print('```')
        print()
    runs, idle, after = load(out)
    if runs:
        tables(out, runs, idle, after)
        noise(runs)
        sb_sanity(out, runs)
        bindings(out, runs)
    print_h2load_table(out)
    load_tsv = out / 'load.tsv'
    if load_tsv.exists() and load_tsv.read_text().strip():
        print()
        print('Machine load average (1/5/15 min) just before each server started: ' + '; '.join(
            f'{r[0]} {r[1]}' for r in csv.reader(open(load_tsv), delimiter='\t') if r))
    sk = out / 'skipped.txt'
    if sk.exists() and sk.read_text().strip():
        print()
        print('Skipped during the run (time budget): ' + '; '.join(sk.read_text().split('\n')).strip('; '))
    rss = rss_over_time(out)
    ratios(out, runs, rss)
    before_after(out, runs, rss)


if __name__ == '__main__':
    main()
