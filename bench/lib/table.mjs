// The suite's one table, as text for the terminal and as Markdown for BENCHMARKS.md.
// ratio: sagaway ÷ peer for rates, peer ÷ sagaway for costs (memory, latency, CPU), so a ratio
// above 1 always means sagaway did better.

const fmt = (v, metric) => {
  if (v === undefined || v === null || Number.isNaN(v)) return 'n/a';
  if (metric === 'KB/stream' || metric.startsWith('ms')) return v.toLocaleString('en-US', { maximumFractionDigits: 1 });
  // Small costs and rates (µs CPU per event, backend runs/s) keep their decimals.
  if (Math.abs(v) < 100 && !Number.isInteger(v))
    return v.toLocaleString('en-US', { maximumFractionDigits: Math.abs(v) < 10 ? 2 : 1 });
  return Math.round(v).toLocaleString('en-US');
};

function cells(r) {
  // An absolute target (absTarget: { text, met }) instead of a ratio, e.g. "≤ 16 KB".
  if (r.absTarget)
    return [
      ...cells({ ...r, absTarget: undefined, target: undefined }).slice(0, 6),
      r.absTarget.text,
      r.absTarget.met ? 'yes' : 'no',
      r.detail ?? '',
    ];
  const met = r.target === undefined || Number.isNaN(r.ratio) ? '' : r.ratio >= r.target ? 'yes' : 'no';
  return [
    r.workload,
    r.metric,
    fmt(r.sagaway, r.metric),
    r.peer,
    fmt(r.peerValue, r.metric),
    Number.isFinite(r.ratio) ? `${r.ratio.toFixed(2)}×` : 'n/a',
    r.target === undefined ? '' : `≥ ${r.target}×`,
    met,
    r.detail ?? '',
  ];
}

const HEAD = ['workload', 'metric', 'sagaway', 'peer', 'peer figure', 'ratio', 'target', 'met', 'detail'];

/** Plain-text table with a header of date, machine and command. */
export function renderText(rows, notes, meta) {
  const all = [HEAD, ...rows.map(cells)];
  const widths = HEAD.map((_, i) => Math.max(...all.map((r) => String(r[i]).length)));
  const line = (r) =>
    r
      .map((c, i) => String(c).padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [
    '',
    `sagaway benchmark suite — ${meta.date} — ${meta.machine}`,
    `command: ${meta.command} (${meta.minutes} min)`,
    '',
    line(HEAD),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map((r) => line(cells(r))),
    '',
    ...notes.map((n) => `- ${n}`),
    '',
  ].join('\n');
}

/** The Markdown section of BENCHMARKS.md, between the suite markers. */
export function renderMarkdown(rows, notes, meta) {
  const esc = (c) => String(c).replaceAll('|', '\\|');
  return [
    '<!-- suite:start -->',
    '## Suite: sagaway against its peers (`bench/run.mjs`)',
    '',
    `Measured ${meta.date} on ${meta.machine}, all figures of the table in one run of`,
    `\`${meta.command}\` (${meta.minutes} min; ${meta.opts.connections} connections, median of ${meta.opts.rounds} interleaved rounds of ${meta.opts.seconds} s per HTTP figure).`,
    'Servers and load generators each run in their own process on loopback; logging is off',
    'everywhere. What each peer runs is in `bench/peers/`; how to read the figures is in',
    '[docs/performance.md](docs/performance.md). Ratio: sagaway ÷ peer for rates, peer ÷ sagaway for',
    'costs (memory, latency), so above 1 means sagaway did better. CPU per request (in the detail',
    'column) is the user + system time of the server processes ÷ requests: for the remote step both',
    "processes of each side and Restate's server, not the NATS or Redis servers.",
    '',
    `| ${HEAD.join(' | ')} |`,
    `|${HEAD.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${cells(r).map(esc).join(' | ')} |`),
    '',
    ...notes.map((n) => `- ${n}`),
    '<!-- suite:end -->',
  ].join('\n');
}
