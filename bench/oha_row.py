#!/usr/bin/env python3
"""One oha JSON report plus the server's CPU ticks around it -> one TSV row (stdout).

Usage: oha_row.py OHA_JSON CPU_TICKS_BEFORE CPU_TICKS_AFTER CLK_TCK WALL_START WALL_END [LABEL...]
Row: LABEL... req_s server_cpu_us_per_req server_cpu_pct p50_ms ok failed bytes_per_req
(`HEADER` below names them). ok = HTTP 200s; failed = other statuses + oha errors, except the
requests cut at the -z deadline. CPU µs/req = server CPU time per 200, the figure that does not
depend on how the cores were shared between server, load generator and everything else.
Used by agui.sh, auth.sh and ab.sh.
"""

import json
import sys

HEADER = ['req_s', 'server_cpu_us_per_req', 'server_cpu_pct', 'p50_ms', 'ok', 'failed', 'bytes_per_req']


def row(path, c0, c1, hz, t0, t1):
    d = json.load(open(path))
    codes = d.get('statusCodeDistribution') or {}
    ok = codes.get('200', 0)
    failed = sum(v for c, v in codes.items() if c != '200') + sum(
        v for e, v in (d.get('errorDistribution') or {}).items() if 'deadline' not in e)
    cpu_s = (int(c1) - int(c0)) / int(hz)
    wall = float(t1) - float(t0)
    return [f"{d['summary']['requestsPerSec'] or 0:.1f}", f'{1e6 * cpu_s / ok if ok else 0:.1f}',
            f'{100 * cpu_s / wall if wall > 0 else 0:.1f}', f"{(d['latencyPercentiles']['p50'] or 0) * 1e3:.3f}",
            str(ok), str(failed), str(d['summary']['sizePerRequest'])]


if __name__ == '__main__':
    if sys.argv[1:] == ['--header']:
        print('\t'.join(HEADER))
    else:
        print('\t'.join(sys.argv[7:] + row(*sys.argv[1:7])))
