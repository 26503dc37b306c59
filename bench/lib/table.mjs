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

const esc = (c) => String(c).replaceAll('|', '\\|');

/** One Markdown table row. */
export const markdownRow = (r) => `| ${cells(r).map(esc).join(' | ')} |`;

/** How a run is described: date, machine, command, minutes and load options. */
const runText = (m) =>
  `${m.date} on ${m.machine}: \`${m.command}\` (${m.minutes} min; ${m.opts.connections} connections, median of ${m.opts.rounds} interleaved rounds of ${m.opts.seconds} s per HTTP figure)`;

/**
 * The Markdown section of BENCHMARKS.md, between the suite markers, from the workloads' results:
 * `groups` is [{ workload, meta, lines, notes }] in table order, `lines` the table rows as
 * Markdown. The workloads of one run share its description; a section put together from several
 * runs (`--only`) says which rows come from which.
 */
export function renderMarkdown(groups) {
  const runs = new Map();
  for (const g of groups) {
    const key = runText(g.meta);
    runs.set(key, [...(runs.get(key) ?? []), g.workload]);
  }
  const measured =
    runs.size === 1
      ? [`Measured ${[...runs.keys()][0]}; all figures of the table in that one run.`]
      : [
          'Measured in several runs; the rows of each workload come from one run, and ratios compare figures of the same run only:',
          '',
          ...[...runs].map(([text, ws]) => `- ${ws.join(', ')}: ${text}`),
          '',
        ];
  return [
    '<!-- suite:start -->',
    '## Suite: sagaway against its peers (`bench/run.mjs`)',
    '',
    ...measured,
    'Servers and load generators each run in their own process on loopback; logging is off',
    'everywhere. What each peer runs is in `bench/peers/`; how to read the figures is in',
    '[docs/performance.md](docs/performance.md). Ratio: sagaway ÷ peer for rates, peer ÷ sagaway for',
    'costs (memory, latency), so above 1 means sagaway did better. CPU per request (in the detail',
    'column) is the user + system time of the server processes ÷ requests: for the remote step both',
    "processes of each side and Restate's server, not the NATS, Redis or PostgreSQL servers.",
    '',
    `| ${HEAD.join(' | ')} |`,
    `|${HEAD.map(() => '---').join('|')}|`,
    ...groups.flatMap((g) => g.lines),
    '',
    ...groups.flatMap((g) => g.notes.map((n) => `- ${n}`)),
    `<!-- suite:data ${JSON.stringify(groups.map((g) => ({ workload: g.workload, meta: g.meta, lines: g.lines, notes: g.notes }))).replaceAll('-->', '--\\u003e')} -->`,
    '<!-- suite:end -->',
  ].join('\n');
}

/**
 * The workload results held in a suite section (its `suite:data` comment). A section written
 * before that comment existed is read from its table: each row goes to the workload its first
 * cell names, with the section's own run description. Returns [] when there is no section.
 */
export function readSuiteSection(section, workloadOf) {
  const data = section.match(/<!-- suite:data (.*) -->/);
  if (data) return JSON.parse(data[1]);
  const when = section.match(
    /Measured (.*?) on (.*?), all figures of the table in one run of\s*`([^`]*)` \(([\d.]+) min; (\d+) connections, median of (\d+) interleaved rounds of (\d+) s/s,
  );
  if (!when) return [];
  const meta = {
    date: when[1],
    machine: when[2].replace(/\s+/g, ' '),
    command: when[3],
    minutes: when[4],
    opts: { connections: Number(when[5]), rounds: Number(when[6]), seconds: Number(when[7]) },
  };
  const groups = new Map();
  for (const line of section.split('\n')) {
    if (!line.startsWith('| ') || line.startsWith('| workload |')) continue;
    const w = workloadOf(line.slice(2).split(' | ')[0]);
    if (!w) continue;
    if (!groups.has(w)) groups.set(w, { workload: w, meta, lines: [], notes: [] });
    groups.get(w).lines.push(line);
  }
  return [...groups.values()];
}
