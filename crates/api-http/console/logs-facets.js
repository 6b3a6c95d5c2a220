// @ts-check
// The log explorer's side panel of top values (each a filter or an exclusion) and the patterns
// view (messages grouped by template).
import { api, sentence } from './api.js';
import { h, when, shortTime, errorBox, empty } from './ui.js';
import { withExclusion } from './logs-search.js';

/** The top values of the search, each a click to filter to it or to exclude it. */
export async function facets(state, body) {
  const box = document.getElementById('facets');
  /** @type {any} */
  let f;
  try {
    f = await api('POST', '/logs/facets', { json: { ...body, top: 8 } });
  } catch (err) {
    box.replaceChildren(h('p', { class: 'muted small' }, sentence(err)));
    return;
  }
  if (!state.view) return;
  const params = state.view.params;
  const group = (title, values, param, kind) =>
    values.length
      ? h(
          'section',
          { class: 'facet' },
          h('h3', {}, title),
          h(
            'ul',
            {},
            values.map((v) => {
              const only = new URLSearchParams(params);
              if (param === 'levels') only.delete('minLevel');
              only.set(param, v.value);
              return h(
                'li',
                {},
                h(
                  'a',
                  {
                    href: `/logs?${only}`,
                    'data-link': true,
                    class: 'facet-value',
                    title: `Only ${v.value}`,
                  },
                  h('span', { class: 'facet-name' }, v.value),
                  h('span', { class: 'facet-count muted' }, v.count.toLocaleString()),
                ),
                h(
                  'a',
                  {
                    href: withExclusion(params, kind, v.value, true),
                    'data-link': true,
                    class: 'facet-exclude',
                    title: `Exclude ${v.value}`,
                    'aria-label': `Exclude ${v.value}`,
                  },
                  '−',
                ),
              );
            }),
          ),
        )
      : null;
  // a facet without values is left out (`replaceChildren` would write a null as text)
  const groups = [
    group('Event types', f.eventTypes, 'eventType', 'eventTypes'),
    group('Resources', f.resources, 'resource', 'resources'),
    group('Players', f.players, 'player', 'players'),
    group('Levels', f.levels, 'levels', 'levels'),
  ].filter(Boolean);
  box.replaceChildren(
    ...groups,
    h(
      'p',
      { class: 'muted small' },
      f.sampled
        ? `Counted over the newest ${f.examined.toLocaleString()} events.`
        : `Counted over all ${f.examined.toLocaleString()} events.`,
    ),
  );
}

export function switchView(state, which) {
  for (const v of ['events', 'patterns'])
    document.getElementById(`view-${v}`).setAttribute('aria-selected', String(v === which));
  document.getElementById('results').hidden = which !== 'events';
  const box = document.getElementById('patterns');
  box.hidden = which !== 'patterns';
  if (which === 'patterns' && !box.dataset.loaded) patterns(state, state.view.body);
}

/** The longest run of words in a template: a message term that finds its events. */
export function termOf(template) {
  return template
    .split('<*>')
    .map((part) => part.replace(/["'`]/g, ' ').trim())
    .reduce((a, b) => (b.length > a.length ? b : a), '')
    .slice(0, 256);
}

/** A pattern's trend as a tiny bar chart (SVG attributes: the console's CSP allows no inline styles). */
export function trendBars(trend) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  const max = Math.max(1, ...trend);
  svg.setAttribute('viewBox', `0 0 ${trend.length * 5} 18`);
  svg.setAttribute('class', 'trend');
  svg.setAttribute('aria-hidden', 'true');
  trend.forEach((n, i) => {
    if (!n) return;
    const bh = Math.max(2, (n / max) * 18);
    const r = document.createElementNS(ns, 'rect');
    r.setAttribute('x', String(i * 5));
    r.setAttribute('y', String(18 - bh));
    r.setAttribute('width', '4');
    r.setAttribute('height', String(bh));
    svg.append(r);
  });
  return svg;
}

export async function patterns(state, body) {
  const box = document.getElementById('patterns');
  box.replaceChildren(h('p', { class: 'muted' }, 'Grouping messages…'));
  /** @type {any} */
  let p;
  try {
    p = await api('POST', '/logs/patterns', { json: { ...body, top: 100 } });
  } catch (err) {
    box.replaceChildren(errorBox(sentence(err)));
    return;
  }
  if (!state.view) return;
  box.dataset.loaded = 'true';
  if (!p.patterns.length) {
    box.replaceChildren(
      empty('No events match this search.', 'Widen the time range or clear filters.'),
    );
    return;
  }
  const open = (pattern) => {
    const next = new URLSearchParams(state.view.params);
    const term = termOf(pattern.template);
    if (term) next.set('message', term);
    if (pattern.resource) next.set('resource', pattern.resource);
    state.view.navigate(`/logs?${next}`);
  };
  box.replaceChildren(
    h(
      'p',
      { class: 'muted small' },
      `${p.patterns.length} pattern${p.patterns.length === 1 ? '' : 's'} in ${
        p.sampled ? 'the newest ' : ''
      }${p.examined.toLocaleString()} events. Numbers, ids and quoted values show as <*>.`,
    ),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'events patterns' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { class: 'num' }, 'Count'),
            h('th', {}, 'Pattern'),
            h('th', { class: 'hide-narrow' }, 'Resource'),
            h('th', { class: 'hide-narrow' }, 'Last seen'),
            h('th', { class: 'hide-narrow' }, 'Trend'),
          ),
        ),
        h(
          'tbody',
          { id: 'pattern-rows' },
          p.patterns.map((pattern) =>
            h(
              'tr',
              {
                tabindex: '0',
                title: `Example: ${pattern.example}`,
                onclick: () => open(pattern),
                onkeydown: (k) => {
                  if (k.key === 'Enter') open(pattern);
                },
              },
              h('td', { class: 'num' }, pattern.count.toLocaleString()),
              h('td', { class: 'msg mono' }, pattern.template),
              h('td', { class: 'hide-narrow' }, pattern.resource || ''),
              h(
                'td',
                { class: 'hide-narrow nowrap', title: when(pattern.lastSeen) },
                shortTime(pattern.lastSeen),
              ),
              h('td', { class: 'hide-narrow' }, trendBars(pattern.trend)),
            ),
          ),
        ),
      ),
    ),
  );
}
