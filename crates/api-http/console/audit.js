// @ts-check
// The audit log (GET /v1/audit, /v1/audit/export): who changed what, newest first, filtered by
// actor, action, target and outcome; the filters live in the URL so a link shares them. Shown
// to owners and admins; the API refuses everyone else.
import { api, sentence, query } from './api.js';
import { h, when, field, table, errorBox } from './ui.js';

/** The action families of the filter (docs/api.md "Audit log" lists every action). */
const FAMILIES = [
  ['', 'All actions'],
  ['object.*', 'Objects (delete, move, purge)'],
  ['object.delete', 'Object deletes'],
  ['placeholder.*', 'Placeholders'],
  ['key.*', 'API keys'],
  ['member.*', 'Members, invitations, passwords'],
  ['org.*', 'Plan'],
];

const FILTERS = ['actor', 'action', 'target', 'outcome'];

/** The audit page (stateless). */
export function auditView() {
  return { render, leave() {} };
}

/** The filters of the page's URL. */
function filtersOf(search) {
  const p = new URLSearchParams(search);
  /** @type {Record<string, string>} */
  const f = {};
  for (const k of FILTERS) {
    const v = p.get(k);
    if (v) f[k] = v;
  }
  return f;
}

/** What a person reads of an entry's details: its fields as `name: value`, briefly. */
function detailsText(details) {
  if (!details || typeof details !== 'object') return '';
  return Object.entries(details)
    .filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`)
    .join(' · ');
}

function row(e, onFilter) {
  const actor = h(
    'a',
    {
      href: '#',
      title: `Only ${e.actor.label}'s changes`,
      onclick: (ev) => {
        ev.preventDefault();
        onFilter({ actor: e.actor.id });
      },
    },
    e.actor.label,
  );
  return h(
    'tr',
    { class: e.outcome === 'refused' ? 'refused' : undefined },
    h('td', {}, when(e.at)),
    h(
      'td',
      {},
      actor,
      h('br'),
      h(
        'small',
        { class: 'muted' },
        `${e.actor.kind} · ${e.via}${e.address ? ` · ${e.address}` : ''}`,
      ),
    ),
    h('td', {}, h('code', {}, e.action)),
    h('td', { class: 'target' }, e.target || '—'),
    h(
      'td',
      {},
      e.outcome === 'refused'
        ? h('span', { class: 'pill', title: e.reason || '' }, 'refused')
        : h('span', { class: 'pill ok' }, 'done'),
    ),
    h('td', { class: 'details' }, h('small', {}, e.reason || detailsText(e.details))),
  );
}

async function render(root, ctx) {
  document.title = 'Audit log · Stowage console';
  const filters = filtersOf(location.search);
  const go = (next) => ctx.navigate(`/audit${query(next)}`);

  const actor = h('input', {
    type: 'text',
    value: filters.actor || '',
    placeholder: 'mem_… or key_…',
  });
  const action = h(
    'select',
    {},
    FAMILIES.map(([v, label]) =>
      h('option', { value: v, selected: v === (filters.action || '') || undefined }, label),
    ),
  );
  const target = h('input', {
    type: 'text',
    value: filters.target || '',
    placeholder: 'screenshots/ or a sign-in name',
  });
  const outcome = h(
    'select',
    {},
    [
      ['', 'Done and refused'],
      ['done', 'Done'],
      ['refused', 'Refused attempts'],
    ].map(([v, label]) =>
      h('option', { value: v, selected: v === (filters.outcome || '') || undefined }, label),
    ),
  );
  const form = h(
    'form',
    {
      class: 'filters',
      onsubmit: (ev) => {
        ev.preventDefault();
        go({
          actor: actor.value.trim() || undefined,
          action: action.value || undefined,
          target: target.value.trim() || undefined,
          outcome: outcome.value || undefined,
        });
      },
    },
    field('Who (id)', actor),
    field('Action', action),
    field('Target starts with', target),
    field('Outcome', outcome),
    h('div', { class: 'field' }, h('button', { type: 'submit', class: 'primary' }, 'Filter')),
    h(
      'div',
      { class: 'field' },
      h('button', { type: 'button', class: 'ghost', onclick: () => go({}) }, 'Clear filters'),
    ),
  );
  const exportLink = h(
    'a',
    {
      class: 'button ghost',
      id: 'audit-export',
      href: `/api/v1/audit/export${query(filters)}`,
      download: '',
    },
    'Export (NDJSON)',
  );
  root.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Audit log'), exportLink),
    h(
      'p',
      { class: 'muted' },
      'Every change to objects, placeholders, keys, members and the plan, with who made it and from where. Kept as long as the plan keeps logs (at least 30 days).',
    ),
    form,
  );

  const list = table(['When', 'Who', 'Action', 'Target', 'Outcome', 'Details'], []);
  const body = /** @type {HTMLElement} */ (list.querySelector('tbody'));
  const more = h('div', { class: 'more' });
  root.append(list, more);

  const load = async (cursor) => {
    let page;
    try {
      page = await api('GET', '/audit', { params: { ...filters, cursor, limit: 100 } });
    } catch (err) {
      more.replaceChildren(errorBox(sentence(err)));
      return;
    }
    if (!cursor && page.events.length === 0) {
      body.append(
        h(
          'tr',
          {},
          h(
            'td',
            { colspan: 6, class: 'muted' },
            Object.keys(filters).length
              ? 'No entry matches these filters.'
              : 'Nothing has been changed yet.',
          ),
        ),
      );
    }
    body.append(...page.events.map((e) => row(e, (f) => go({ ...filters, ...f }))));
    more.replaceChildren(
      page.nextCursor
        ? h(
            'button',
            { type: 'button', class: 'ghost', onclick: () => load(page.nextCursor) },
            'Older entries',
          )
        : '',
    );
  };
  await load(undefined);
}
