// @ts-check
// Alerts: rules on saved searches, the destinations they send to (Discord, signed webhooks), and
// the delivery log with "send again" (the /v1/logs/alert-rules, /destinations and
// /alert-deliveries routes). Everyone who reads logs sees them; `logs:alerts` changes them.
import { api, sentence } from './api.js';
import { h, when, dialog, copy, toast, field, table, empty } from './ui.js';

/** The alerts page (stateless). */
export function alertsView() {
  return { render, leave() {} };
}

const GROUPS = [
  ['', 'All events together'],
  ['resource', 'Each resource on its own'],
  ['eventType', 'Each event type on its own'],
  ['player', 'Each player on its own'],
];

/** What makes a rule fire, in words. */
function trigger(r) {
  if (r.kind === 'every') return 'Every matching event';
  const per = r.groupBy ? `, per ${r.groupBy === 'eventType' ? 'event type' : r.groupBy}` : '';
  const cool = r.cooldownMinutes ? `; again after ${r.cooldownMinutes} min` : '';
  return `≥ ${r.threshold} in ${r.windowMinutes} min${per}${cool}`;
}

/**
 * @param {HTMLElement} root
 * @param {import('./types.js').ViewContext} ctx
 */
async function render(root, ctx) {
  document.title = 'Alerts · Stowage console';
  const manages = ctx.me.permissions.logs.includes('alerts');
  const [{ alertRules: rules }, { destinations }, { savedSearches }] = await Promise.all([
    api('GET', '/logs/alert-rules'),
    api('GET', '/logs/destinations'),
    api('GET', '/logs/saved-searches'),
  ]);
  /** @type {import('./types.js').AlertRule[]} */
  const ruleList = rules;
  /** @type {import('./types.js').Destination[]} */
  const destList = destinations;
  /** @type {import('./types.js').SavedSearch[]} */
  const searches = savedSearches;
  const ruleFilter = ctx.params.get('rule');
  const reload = () => ctx.navigate(`/alerts${location.search}`, { replace: true });
  const nameOf = (list, id) => list.find((x) => x.id === id)?.name || id;
  const act = async (method, path, json, done) => {
    try {
      done(await api(method, path, json ? { json } : undefined));
    } catch (err) {
      toast(sentence(err), 'error');
    }
  };
  /** A row's button, for callers who may change alerts (none otherwise). */
  const change = (label, cls, onclick) =>
    manages ? h('button', { type: 'button', class: `${cls} compact`, onclick }, label) : null;

  root.append(
    h(
      'div',
      { class: 'pane-head' },
      h('h1', {}, 'Alerts'),
      manages
        ? h(
            'div',
            { class: 'row-actions' },
            h(
              'button',
              {
                type: 'button',
                class: 'primary',
                onclick: () => ruleDialog(searches, destList, null).then((ok) => ok && reload()),
              },
              'New rule',
            ),
            h(
              'button',
              { type: 'button', onclick: () => destinationDialog().then((ok) => ok && reload()) },
              'New destination',
            ),
          )
        : h('p', { class: 'muted' }, 'Changing alerts takes the logs:alerts permission.'),
    ),
  );

  // rules
  root.append(h('h2', {}, 'Rules'));
  root.append(
    ruleList.length
      ? table(
          ['Rule', 'Watches', 'Fires on', 'Sends to', 'State', ''],
          ruleList.map((r) => {
            const muted = r.mutedUntil && Date.parse(r.mutedUntil) > Date.now();
            return h(
              'tr',
              { 'data-rule': r.id },
              h('td', {}, r.name),
              h(
                'td',
                {},
                h(
                  'a',
                  {
                    href: `/logs?saved=${encodeURIComponent(r.savedSearchId)}&range=1h`,
                    'data-link': true,
                  },
                  nameOf(searches, r.savedSearchId),
                ),
              ),
              h('td', {}, trigger(r)),
              h('td', {}, r.destinationIds.map((d) => nameOf(destList, d)).join(', ')),
              h(
                'td',
                {},
                muted
                  ? h('span', { class: 'pill' }, `muted until ${when(r.mutedUntil)}`)
                  : h('span', { class: 'pill ok' }, 'active'),
                h('br'),
                h(
                  'small',
                  { class: 'muted' },
                  r.lastFiredAt ? `last fired ${when(r.lastFiredAt)}` : 'not fired lately',
                ),
              ),
              h(
                'td',
                { class: 'row-actions' },
                h(
                  'a',
                  {
                    href: `/alerts?rule=${encodeURIComponent(r.id)}`,
                    'data-link': true,
                    class: 'button ghost compact',
                  },
                  'Deliveries',
                ),
                change(muted ? 'Unmute' : 'Mute 1 h', '', () =>
                  act(
                    'PATCH',
                    `/logs/alert-rules/${encodeURIComponent(r.id)}`,
                    { mutedUntil: muted ? null : new Date(Date.now() + 3600e3).toISOString() },
                    () => {
                      toast(
                        muted
                          ? `“${r.name}” is active again.`
                          : `“${r.name}” is muted for an hour.`,
                      );
                      reload();
                    },
                  ),
                ),
                change('Edit', '', () =>
                  ruleDialog(searches, destList, r).then((ok) => ok && reload()),
                ),
                change('Delete', 'danger', () =>
                  act('DELETE', `/logs/alert-rules/${encodeURIComponent(r.id)}`, null, () => {
                    toast(`Deleted “${r.name}”.`);
                    reload();
                  }),
                ),
              ),
            );
          }),
        )
      : empty(
          'No alert rules yet.',
          searches.length
            ? 'A rule watches a saved search and tells Discord or a webhook: “New rule”, or “Alert on this search” on the logs page.'
            : 'Save a search on the logs page first; a rule watches a saved search.',
        ),
  );

  // destinations
  root.append(h('h2', {}, 'Destinations'));
  root.append(
    destList.length
      ? table(
          ['Destination', 'Kind', 'Address', ''],
          destList.map((d) =>
            h(
              'tr',
              { 'data-destination': d.id },
              h('td', {}, d.name),
              h('td', {}, d.kind === 'discord' ? 'Discord webhook' : 'Signed webhook'),
              h('td', {}, h('code', {}, d.url)),
              h(
                'td',
                { class: 'row-actions' },
                change('Send test message', '', () =>
                  act('POST', `/logs/destinations/${encodeURIComponent(d.id)}/test`, null, () => {
                    toast(
                      `Test message queued for “${d.name}”; the delivery log shows how it went.`,
                    );
                    reload();
                  }),
                ),
                change('Delete', 'danger', () =>
                  act('DELETE', `/logs/destinations/${encodeURIComponent(d.id)}`, null, () => {
                    toast(`Deleted “${d.name}”.`);
                    reload();
                  }),
                ),
              ),
            ),
          ),
        )
      : empty(
          'No destinations yet.',
          'Add a Discord channel’s webhook or any HTTPS endpoint: “New destination”.',
        ),
  );

  // delivery log
  const query = ruleFilter ? `?ruleId=${encodeURIComponent(ruleFilter)}&limit=50` : '?limit=50';
  /** @type {{ deliveries: import('./types.js').Delivery[] }} */
  const { deliveries } = await api('GET', `/logs/alert-deliveries${query}`);
  root.append(
    h(
      'h2',
      {},
      ruleFilter ? `Deliveries of “${nameOf(ruleList, ruleFilter)}” ` : 'Delivery log ',
      ruleFilter
        ? h('a', { href: '/alerts', 'data-link': true, class: 'muted' }, '(show all)')
        : null,
    ),
  );
  root.append(
    deliveries.length
      ? table(
          ['When', 'Rule', 'Destination', 'Status', 'Attempts', 'Answer', ''],
          deliveries.map((d) =>
            h(
              'tr',
              { 'data-delivery': d.id },
              h('td', {}, when(d.createdAt)),
              h('td', {}, d.ruleId ? nameOf(ruleList, d.ruleId) : 'test message'),
              h('td', {}, nameOf(destList, d.destinationId)),
              h(
                'td',
                {},
                h('span', { class: d.status === 'delivered' ? 'pill ok' : 'pill' }, d.status),
                d.status === 'pending' && d.nextAttemptAt
                  ? h('small', { class: 'muted' }, ` next try ${when(d.nextAttemptAt)}`)
                  : null,
              ),
              h('td', {}, String(d.attempts)),
              h(
                'td',
                {},
                [d.lastCode ? String(d.lastCode) : '', d.lastError || '']
                  .filter(Boolean)
                  .join(' — ') || '—',
              ),
              h(
                'td',
                { class: 'row-actions' },
                manages && d.status !== 'pending'
                  ? h(
                      'button',
                      {
                        type: 'button',
                        class: 'compact',
                        onclick: () =>
                          act(
                            'POST',
                            `/logs/alert-deliveries/${encodeURIComponent(d.id)}/send-again`,
                            null,
                            () => {
                              toast('Sending again, with the same webhook id.');
                              reload();
                            },
                          ),
                      },
                      'Send again',
                    )
                  : null,
              ),
            ),
          ),
        )
      : empty('Nothing sent yet.', 'Deliveries show here as rules fire, with each answer.'),
  );
  const pick = ctx.params.get('new');
  if (pick && manages) {
    ctx.navigate('/alerts', { replace: true });
    ruleDialog(searches, destList, null, pick).then((ok) => ok && reload());
  }
}

/**
 * Makes or changes a rule; resolves true when saved.
 * @param {import('./types.js').SavedSearch[]} searches
 * @param {import('./types.js').Destination[]} destinations
 * @param {import('./types.js').AlertRule | null} rule
 * @param {string} [searchId]
 */
async function ruleDialog(searches, destinations, rule, searchId) {
  if (!destinations.length) {
    toast('Add a destination first: where should the alert go?', 'error');
    return false;
  }
  const name = h('input', { type: 'text', maxlength: '100', value: rule?.name || '' });
  const search = h(
    'select',
    {},
    searches.map((s) =>
      h('option', { value: s.id, selected: s.id === (rule?.savedSearchId || searchId) }, s.name),
    ),
  );
  const kind = h(
    'select',
    {},
    h(
      'option',
      { value: 'every', selected: rule?.kind !== 'threshold' },
      'Every matching event (a log channel)',
    ),
    h(
      'option',
      { value: 'threshold', selected: rule?.kind === 'threshold' },
      'When there are many (a threshold)',
    ),
  );
  const count = h('input', {
    type: 'number',
    min: '1',
    max: '100000',
    value: String(rule?.threshold || 20),
  });
  const minutes = h('input', {
    type: 'number',
    min: '1',
    max: '1440',
    value: String(rule?.windowMinutes || 5),
  });
  const cooldown = h('input', {
    type: 'number',
    min: '0',
    max: '10080',
    value: String(rule?.cooldownMinutes || 0),
  });
  const group = h(
    'select',
    {},
    GROUPS.map(([v, label]) =>
      h('option', { value: v, selected: (rule?.groupBy || '') === v }, label),
    ),
  );
  const thresholdFields = h(
    'div',
    {},
    field('At least this many events', count),
    field('Within minutes', minutes),
    field('Again after (minutes, 0: only after it clears)', cooldown),
    field('Count', group),
  );
  const sync = () => (thresholdFields.hidden = kind.value !== 'threshold');
  kind.addEventListener('change', sync);
  sync();
  const boxes = destinations.map((d) =>
    h('input', {
      type: 'checkbox',
      value: d.id,
      checked: rule ? rule.destinationIds.includes(d.id) : destinations.length === 1,
    }),
  );
  const body = h(
    'div',
    {},
    field('Name', name),
    field('Watches', search, 'The saved search’s servers and filters'),
    field('Fires on', kind),
    thresholdFields,
    h(
      'fieldset',
      { class: 'field' },
      h('legend', {}, 'Sends to'),
      boxes.map((b, i) => h('label', { class: 'check' }, b, ` ${destinations[i].name}`)),
    ),
  );
  for (;;) {
    const choice = await dialog(rule ? `Edit “${rule.name}”` : 'New alert rule', body, [
      ['Cancel', ''],
      [rule ? 'Save' : 'Create rule', 'save', 'primary'],
    ]);
    if (choice !== 'save') return false;
    /** @type {Record<string, any>} */
    const json = {
      name: name.value,
      savedSearchId: search.value,
      kind: kind.value,
      destinationIds: boxes.filter((b) => b.checked).map((b) => b.value),
    };
    if (kind.value === 'threshold') {
      json.threshold = Number(count.value);
      json.windowMinutes = Number(minutes.value);
      json.cooldownMinutes = Number(cooldown.value);
      json.groupBy = group.value;
    } else if (rule) {
      json.groupBy = '';
    }
    try {
      if (rule) await api('PATCH', `/logs/alert-rules/${encodeURIComponent(rule.id)}`, { json });
      else await api('POST', '/logs/alert-rules', { json });
      toast(
        rule
          ? 'Rule saved.'
          : `Rule “${name.value.trim()}” made: it watches every batch from now on.`,
      );
      return true;
    } catch (err) {
      // the same form again, with what to fix
      toast(sentence(err), 'error');
    }
  }
}

/** Adds a destination; resolves true when made (a webhook's secret shown once). */
async function destinationDialog() {
  const name = h('input', { type: 'text', maxlength: '100' });
  const kind = h(
    'select',
    {},
    h('option', { value: 'discord' }, 'Discord webhook'),
    h('option', { value: 'webhook' }, 'Signed webhook (any HTTPS endpoint)'),
  );
  const url = h('input', { type: 'url', placeholder: 'https://discord.com/api/webhooks/…' });
  kind.addEventListener('change', () => {
    url.setAttribute(
      'placeholder',
      kind.value === 'discord' ? 'https://discord.com/api/webhooks/…' : 'https://…',
    );
  });
  const body = h(
    'div',
    {},
    field('Name', name),
    field('Kind', kind),
    field(
      'Address',
      url,
      'In Discord: channel settings → Integrations → Webhooks → Copy Webhook URL',
    ),
  );
  for (;;) {
    const choice = await dialog('New destination', body, [
      ['Cancel', ''],
      ['Add destination', 'save', 'primary'],
    ]);
    if (choice !== 'save') return false;
    try {
      /** @type {{ destination: import('./types.js').Destination, signingSecret?: string }} */
      const made = await api('POST', '/logs/destinations', {
        json: { name: name.value, kind: kind.value, url: url.value },
      });
      if (made.signingSecret) {
        const secret = made.signingSecret;
        await dialog(
          'Signing secret',
          h(
            'div',
            {},
            h(
              'p',
              {},
              'Your endpoint checks each request’s webhook-signature with this secret (Standard Webhooks). Copy it now: it is not shown again.',
            ),
            h('p', {}, h('code', { class: 'secret' }, secret)),
            h('button', { type: 'button', onclick: () => copy(secret, 'Secret') }, 'Copy secret'),
          ),
          [['Done', '']],
        );
      } else {
        toast(`Added “${made.destination.name}”. Send it a test message to check.`);
      }
      return true;
    } catch (err) {
      toast(sentence(err), 'error');
    }
  }
}
