// The kvindexer dashboard: polls /overview, draws the node's workers, partitions, cluster and live rates, and
// answers prompts in the query playground through the node's own /query routes. No dependencies, no inline code.
'use strict';

const POLL_MS = 2000;
const HISTORY = 90;            // points per chart: three minutes at the poll interval
const SILENT_SECONDS = 60;     // an active listener quiet this long is marked silent
const TIERS = [['device', 'GPU'], ['host_pinned', 'CPU'], ['disk', 'Disk'], ['external', 'External']];
const TOKEN_KEY = 'kvindexer.token';
const REQUEST_TIMEOUT_MS = 10000;  // a hung request must not stop the polling

const state = {
  token: sessionStorage.getItem(TOKEN_KEY) || '',
  previous: null,               // the last overview, for rates
  series: { events: [], queries: [], latency: [] },
  partitions: [],
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') node.className = v; else node.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  return node;
}

/** fetch with the bearer token when one is set and a deadline; a 401 asks for a token. */
async function api(path, options) {
  const opts = Object.assign({}, options || {});
  opts.headers = Object.assign({}, opts.headers || {});
  if (state.token) opts.headers['Authorization'] = 'Bearer ' + state.token;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), REQUEST_TIMEOUT_MS);
  opts.signal = deadline.signal;
  let response;
  try {
    response = await fetch(path, opts);
  } catch (e) {
    throw new Error(e.name === 'AbortError' ? 'no answer within ' + REQUEST_TIMEOUT_MS / 1000 + ' s' : e.message);
  } finally {
    clearTimeout(timer);
  }
  if (response.status === 401) {
    askForToken(state.token ? 'the token was refused' : '');
    throw new Error('unauthorized');
  }
  return response;
}

function askForToken(message) {
  const form = $('token-form');
  $('token-error').textContent = message || '';
  if (form.hidden) {
    form.hidden = false;
    $('token-input').focus();
  }
}

function fmt(n) {
  if (n === null || n === undefined) return '–';
  if (Math.abs(n) >= 1e9) return (n / 1e9).toFixed(1) + 'G';
  if (Math.abs(n) >= 1e6) return (n / 1e6).toFixed(1) + 'M';
  if (Math.abs(n) >= 1e4) return (n / 1e3).toFixed(1) + 'k';
  return Number.isInteger(n) ? String(n) : n.toFixed(n < 10 ? 2 : 1);
}

function bytes(n) {
  if (!n) return '0 B';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  const i = Math.min(units.length - 1, Math.floor(Math.log2(n) / 10));
  return (n / Math.pow(1024, i)).toFixed(i ? 1 : 0) + ' ' + units[i];
}

function age(seconds) {
  if (seconds === undefined || seconds === null) return '–';
  if (seconds < 1) return 'now';
  if (seconds < 120) return Math.round(seconds) + ' s ago';
  if (seconds < 7200) return Math.round(seconds / 60) + ' min ago';
  return Math.round(seconds / 3600) + ' h ago';
}

function badge(status) {
  return el('span', { class: 'badge ' + status.replace(/[^a-z]+/g, '-') }, status);
}

// ---- polling ----

async function poll() {
  try {
    const response = await api('/overview');
    if (!response.ok) throw new Error('/overview answered ' + response.status);
    const overview = await response.json();
    $('load-error').hidden = true;
    render(overview);
  } catch (e) {
    if (e.message !== 'unauthorized') {
      $('load-error').hidden = false;
      $('load-error').textContent = 'Cannot reach the node: ' + e.message;
      $('node-status').className = 'badge bad';
      $('node-status').textContent = 'unreachable';
    }
  } finally {
    setTimeout(poll, POLL_MS);
  }
}

function render(o) {
  const prev = state.previous;
  const dt = prev ? (o.node.now_millis - prev.node.now_millis) / 1000 : 0;
  renderNode(o);
  renderCharts(o, prev, dt);
  renderWorkers(o, prev, dt);
  renderPartitions(o);
  renderCluster(o);
  renderSelection(o);
  state.previous = o;
  $('updated').textContent = 'updated ' + new Date(o.node.now_millis).toLocaleTimeString();
  document.body.dataset.loaded = 'true';
}

function renderNode(o) {
  const status = $('node-status');
  status.className = 'badge ' + (o.node.ready ? 'ok' : 'bad');
  status.textContent = o.node.ready ? 'ready' : 'not ready';
  const parts = [];
  if (!o.node.ready) parts.push(o.node.not_ready_reason);
  parts.push('up ' + age(o.node.uptime_seconds).replace(' ago', ''));
  $('node-detail').textContent = parts.join(' · ');
}

// ---- charts ----

function push(series, value) {
  series.push(value);
  if (series.length > HISTORY) series.shift();
}

function renderCharts(o, prev, dt) {
  if (prev && dt > 0) {
    const events = Math.max(0, o.totals.events_applied - prev.totals.events_applied) / dt;
    const queries = Math.max(0, o.totals.queries - prev.totals.queries);
    const seconds = Math.max(0, o.totals.query_seconds - prev.totals.query_seconds);
    push(state.series.events, events);
    push(state.series.queries, queries / dt);
    push(state.series.latency, queries > 0 ? seconds * 1000 / queries : null);
  }
  chart('chart-events', state.series.events);
  chart('chart-queries', state.series.queries);
  chart('chart-latency', state.series.latency);
}

function chart(id, points) {
  const figure = $(id);
  const area = figure.querySelector('svg');
  area.replaceChildren();
  const W = 320, H = 110, TOP = 12;
  const values = points.filter((v) => v !== null);
  const max = Math.max(1e-9, ...values);
  area.append(svg('line', { x1: 0, y1: H - 1, x2: W, y2: H - 1 }));
  area.append(svg('line', { x1: 0, y1: TOP, x2: W, y2: TOP }));
  const label = svg('text', { x: 2, y: TOP - 2 });
  label.textContent = values.length ? 'max ' + fmt(max) : 'waiting for data';
  area.append(label);
  // One polyline per run of values: an interval without a value (no query, no latency) leaves a gap.
  let run = [];
  const flush = () => {
    if (run.length) area.append(svg('polyline', { points: run.join(' ') }));
    run = [];
  };
  points.forEach((v, i) => {
    if (v === null) {
      flush();
      return;
    }
    const x = (W * (HISTORY - points.length + i)) / (HISTORY - 1);
    const y = H - 1 - ((H - 1 - TOP) * v) / max;
    run.push(x.toFixed(1) + ',' + y.toFixed(1));
  });
  flush();
  const last = points.length ? points[points.length - 1] : null;
  figure.querySelector('.value').textContent = fmt(last);
}

// ---- tables ----

function renderWorkers(o, prev, dt) {
  const before = new Map();
  if (prev) {
    for (const w of prev.workers) for (const r of w.ranks) before.set(w.instance_id + '/' + r.dp_rank, r);
  }
  const body = $('workers').querySelector('tbody');
  body.replaceChildren();
  for (const w of o.workers) {
    w.ranks.forEach((r, i) => {
      const was = before.get(w.instance_id + '/' + r.dp_rank);
      const known = (x) => x && x.events !== undefined;
      const rate = known(was) && known(r) && dt > 0 ? Math.max(0, r.events - was.events) / dt : null;
      const silent = r.status === 'active' && r.last_event_age_seconds > SILENT_SECONDS;
      const inexact = r.lost_batches > 0;  // batches lost for good: its blocks may be missing or stale
      const status = r.status || 'no listener';
      const row = el('tr', {
        class: r.status === 'failed' ? 'failed' : inexact ? 'inexact' : silent ? 'silent' : null,
        'data-instance': w.instance_id, 'data-rank': r.dp_rank, 'data-status': r.status || 'none',
        'data-lost': inexact ? r.lost_batches : null,
      },
      el('td', {}, i === 0 ? (w.instance_name || w.instance_id) : ''),
      el('td', {}, i === 0 ? w.model + ' / ' + w.tenant : ''),
      el('td', { class: 'num' }, r.dp_rank),
      el('td', { class: 'endpoint' }, r.endpoint || '–',
        r.replay_endpoint ? el('span', { class: 'replay' }, 'replay ' + r.replay_endpoint) : null),
      el('td', {}, badge(status), silent ? el('span', { class: 'badge warn' }, 'silent') : null,
        inexact ? el('span', { class: 'badge bad', title: 'batches lost for good: its blocks may be missing or stale' },
          'inexact, ' + fmt(r.lost_batches) + ' lost') : null),
      el('td', { class: 'num' }, rate === null ? '–' : fmt(rate)),
      el('td', {}, r.events === 0 ? 'none yet' : age(r.last_event_age_seconds)),
      ...TIERS.map(([t]) => el('td', { class: 'num' }, r.blocks ? fmt(r.blocks[t]) : '–')));
      body.append(row);
      if (r.last_error) {
        body.append(el('tr', { class: 'failed' }, el('td', {}), el('td', { class: 'last-error', colspan: 10 },
          'last error (' + r.error_at + '): ' + r.last_error)));
      } else if (r.previous_error) {
        body.append(el('tr', { class: 'recovered' }, el('td', {}), el('td', { class: 'previous-error', colspan: 10 },
          'recovered since: ' + r.previous_error + ' (' + r.error_at + ')')));
      }
    });
  }
  $('workers-empty').hidden = o.workers.length > 0;
}

function renderPartitions(o) {
  const body = $('partitions').querySelector('tbody');
  body.replaceChildren();
  for (const p of o.partitions) {
    body.append(el('tr', { 'data-model': p.model, 'data-tenant': p.tenant },
      el('td', {}, p.model), el('td', {}, p.tenant), el('td', { class: 'num' }, p.block_size),
      ...TIERS.map(([t]) => el('td', { class: 'num' }, fmt(p.blocks[t]))),
      el('td', { class: 'num' }, bytes(p.memory_bytes)),
      el('td', { class: 'num' }, p.engines),
      el('td', { class: 'num' }, fmt(p.queries)),
      el('td', { class: 'num' }, p.queries ? Math.round(100 * p.zero_match_queries / p.queries) + ' %' : '–'),
      el('td', { class: 'num' }, p.mean_match_ratio === null ? '–' : Math.round(100 * p.mean_match_ratio) + ' %')));
  }
  const m = o.memory;
  $('memory-line').textContent = 'Index memory ' + bytes(m.used_bytes) + ' of '
    + (m.budget_bytes > 0 ? bytes(m.budget_bytes) + ' budget' : 'no set budget')
    + (m.evicted_blocks ? ' · ' + fmt(m.evicted_blocks) + ' blocks evicted' : '');
  updatePartitionChoices(o.partitions);
}

function renderCluster(o) {
  const c = o.cluster;
  const facts = [
    ['Mode', c.clustered ? (c.sharded ? 'sharded, replication factor ' + c.replication_factor : 'replicated cluster')
      : 'standalone'],
    ['Members', c.member_count],
    ['This node', o.node.node_id || '–'],
    ['Recovery', c.recovery.peer ? 'from ' + c.recovery.peer + ': ' + c.recovery.partitions + ' partitions, '
      + fmt(c.recovery.events) + ' events in ' + c.recovery.seconds.toFixed(2) + ' s'
      + (c.recovery.exact ? ' (exact)' : '') : 'started empty'],
    ['Data directory', dataDir(o.data_dir, o.node.now_millis)],
  ];
  $('cluster-facts').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  const body = $('members').querySelector('tbody');
  body.replaceChildren(...c.members.map((m) => el('tr', {},
    el('td', {}, m.node_id + (m.self ? ' (this node)' : '')), el('td', {}, m.url),
    el('td', {}, badge(m.ready ? 'ok' : 'pending')))));
  $('members').hidden = c.members.length === 0;
  const sharded = o.workers.filter((w) => Array.isArray(w.shard_holders));
  $('shards').querySelector('tbody').replaceChildren(...sharded.map((w) => el('tr', { 'data-instance': w.instance_id },
    el('td', {}, w.instance_name || w.instance_id), el('td', {}, w.model + ' / ' + w.tenant),
    el('td', {}, w.shard_holders.join(', ') || 'no live holder'))));
  $('shards').hidden = !c.sharded || sharded.length === 0;
}

/** The selection service running on this node, if one does: its load, session bindings and predicted entries. */
function renderSelection(o) {
  const s = o.selection;
  $('selection').hidden = !s;
  if (!s) return;
  const facts = [
    ['Port', s.port === null ? '–' : s.port],
    ['Schedulable workers', fmt(s.schedulable_workers)],
    ['Reservations', fmt(s.active_reservations) + ' (' + fmt(s.booked_blocks) + ' blocks booked)'],
    ['Queued selections', fmt(s.queued_selections)],
    ['Session bindings', s.session_bindings ? fmt(s.session_bindings.bindings) + ' ('
      + fmt(s.session_bindings.leases) + ' leased)' : 'off'],
    ['Predicted entries', predicted(s.predicted)],
  ];
  $('selection-facts').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

/** Predicted blocks held, and how many of the ended predictions' blocks the engines confirmed. */
function predicted(p) {
  if (!p) return 'off';
  const ended = p.confirmed_blocks + p.unconfirmed_blocks;
  const parts = [fmt(p.entries) + ' blocks held', ended
    ? Math.round(100 * p.confirmed_blocks / ended) + ' % of ' + fmt(ended) + ' ended blocks confirmed by the engines'
    : 'none ended yet'];
  if (p.evicted) parts.push(fmt(p.evicted) + ' ended early');
  return el('span', { id: 'predicted', 'data-confirmed': String(p.confirmed_blocks),
    'data-unconfirmed': String(p.unconfirmed_blocks) }, parts.join(' · '));
}

/** The data directory's state: its last snapshot, failures, and the last write's error in red. */
function dataDir(d, now) {
  if (!d) return 'none (index in memory only)';
  const parts = [d.dir, d.last_write_millis === null ? 'no snapshot yet'
    : 'last snapshot ' + age((now - d.last_write_millis) / 1000) + ', ' + bytes(d.last_write_bytes) + ' in '
      + d.last_write_seconds.toFixed(2) + ' s'];
  if (d.failed_writes) parts.push(fmt(d.failed_writes) + ' failed writes');
  if (d.rejected_files) parts.push(fmt(d.rejected_files) + ' files rejected');
  return el('span', { id: 'data-dir', 'data-writable': String(!d.last_error) }, parts.join(' · '),
    d.last_error ? el('span', { class: 'error block' }, d.last_error) : null);
}

// ---- query playground ----

function updatePartitionChoices(partitions) {
  const select = $('q-partition');
  const key = (p) => p.model + '\u0000' + p.tenant;
  const known = partitions.map(key).join('\u0001');
  if (known === state.partitions.map(key).join('\u0001')) return;
  const chosen = select.value;
  state.partitions = partitions;
  select.replaceChildren(...partitions.map((p) => el('option', { value: key(p) }, p.model + ' / ' + p.tenant)));
  if (chosen && partitions.some((p) => key(p) === chosen)) select.value = chosen;
}

/** The pasted numbers as JSON literals, kept as text so that no u64 hash loses a digit. */
function numbers(text) {
  const items = text.split(/[\s,\[\]]+/).filter((s) => s.length);
  for (const s of items) {
    if (!/^-?\d{1,20}$/.test(s)) throw new Error('not a number: ' + s.slice(0, 30));
  }
  return items;
}

function queryRequest(p, flavor, kind, items) {
  const list = '[' + items.join(',') + ']';
  if (flavor === 'dynamo') {
    const head = '{"model_name":' + JSON.stringify(p.model) + ',"routing_group":' + JSON.stringify(p.tenant);
    return kind === 'tokens' ? { path: '/query', body: head + ',"token_ids":' + list + '}' }
      : { path: '/query_by_hash', body: head + ',"block_hashes":' + list + '}' };
  }
  const head = '{"model":' + JSON.stringify(p.model) + ',"tenant_id":' + JSON.stringify(p.tenant);
  return kind === 'tokens' ? { path: '/query?flavor=mooncake', body: head + ',"token_ids":' + list + '}' }
    : { path: '/query_by_hash?flavor=mooncake', body: head + ',"seq_hashes":' + list + '}' };
}

/** Both flavors as one list: instance name, tokens cached per tier (cumulative: gpu <= cpu <= disk), per-rank gpu. */
function matchesOf(flavor, answer) {
  if (flavor === 'dynamo') {
    return Object.entries(answer.instances || {}).map(([id, m]) => ({
      name: id, gpu: m.gpu, cpu: m.cpu, disk: m.disk, ranks: m.dp || {} }));
  }
  const groups = Object.values(answer);
  const instances = groups.length ? groups[0] : {};
  return Object.entries(instances).map(([id, m]) => ({
    name: id, gpu: m.GPU, cpu: m.CPU, disk: m.DISK, ranks: m.DP || {} }));
}

function bar(total, gpu, cpu, disk) {
  const area = svg('svg', { class: 'bar', viewBox: '0 0 1000 10', preserveAspectRatio: 'none' });
  const scale = (v) => (total > 0 ? Math.min(1000, (1000 * v) / total) : 0);
  area.append(svg('rect', { class: 'miss', x: 0, y: 0, width: 1000, height: 10 }));
  const parts = [['gpu', 0, gpu], ['cpu', gpu, cpu], ['disk', cpu, disk]];
  for (const [cls, from, to] of parts) {
    if (to > from) {
      area.append(svg('rect', { class: cls, x: scale(from), y: 0, width: scale(to) - scale(from), height: 10,
        'data-tokens': to - from }));
    }
  }
  return area;
}

async function runQuery(event) {
  event.preventDefault();
  $('q-error').textContent = '';
  const p = state.partitions.find((x) => x.model + '\u0000' + x.tenant === $('q-partition').value);
  if (!p) {
    $('q-error').textContent = 'No partition yet: register a worker first.';
    return;
  }
  const flavor = $('q-flavor').value;
  const kind = $('q-kind').value;
  let items;
  try {
    items = numbers($('q-input').value);
  } catch (e) {
    $('q-error').textContent = e.message;
    return;
  }
  const request = queryRequest(p, flavor, kind, items);
  let answer;
  try {
    const response = await api(request.path, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: request.body });
    answer = await response.json();
    if (!response.ok) throw new Error(response.status + ': ' + (answer.error || answer.message || JSON.stringify(answer)));
  } catch (e) {
    if (e.message !== 'unauthorized') $('q-error').textContent = 'Query failed: ' + e.message;
    return;
  }
  const total = kind === 'tokens' ? items.length : items.length * p.block_size;
  const matches = matchesOf(flavor, answer).sort((a, b) => b.disk - a.disk);
  $('q-summary').textContent = 'POST ' + request.path + ' · ' + fmt(total) + ' prompt tokens · '
    + matches.filter((m) => m.disk > 0).length + ' instance(s) hold a prefix';
  const out = $('q-result');
  out.replaceChildren();
  if (!matches.length) out.append(el('p', { class: 'muted' }, 'No instance in this partition.'));
  for (const m of matches) {
    out.append(el('div', { class: 'match', 'data-instance': m.name, 'data-gpu': m.gpu, 'data-cpu': m.cpu,
      'data-disk': m.disk },
      el('span', {}, m.name), bar(total, m.gpu, m.cpu, m.disk),
      el('span', { class: 'num' }, fmt(m.disk) + ' / ' + fmt(total))));
    for (const [rank, tokens] of Object.entries(m.ranks)) {
      out.append(el('div', { class: 'match rank', 'data-rank': rank },
        el('span', { class: 'muted' }, 'dp rank ' + rank), bar(total, tokens, tokens, tokens),
        el('span', { class: 'num muted' }, fmt(tokens) + ' GPU')));
    }
  }
}

// ---- footer ----

/**
 * A footer link under a token: a plain link cannot send the Authorization header (every route answers 401 under
 * --auth-all), so the click fetches the document with the token, as the page's own requests do, and opens it as a
 * blob in a new tab. The tab is opened at once, while the click still allows it, and filled when the answer comes.
 */
async function openWithToken(event) {
  if (!state.token || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  const path = event.currentTarget.getAttribute('href');
  const tab = window.open('', '_blank');
  try {
    const response = await api(path);
    if (!response.ok) throw new Error(path + ' answered ' + response.status);
    const url = URL.createObjectURL(await response.blob());
    if (tab) tab.location.href = url; else location.href = url;
  } catch (e) {
    if (tab) tab.close();
    if (e.message !== 'unauthorized') {
      $('load-error').hidden = false;
      $('load-error').textContent = 'Cannot open ' + path + ': ' + e.message;
    }
  }
}

// ---- start ----

$('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  state.token = $('token-input').value.trim();
  sessionStorage.setItem(TOKEN_KEY, state.token);
  $('token-form').hidden = true;
});
$('token-button').addEventListener('click', () => askForToken(''));
$('query-form').addEventListener('submit', runQuery);
for (const link of $('data-links').querySelectorAll('a')) link.addEventListener('click', openWithToken);
poll();
