// @ts-check
// Lifecycle rules on the files page (GET|PUT|DELETE /v1/lifecycle, POST /v1/objects/keep): the
// rule that decides for the folder on screen, a dialog to set and remove rules, and what a rule
// does to one file in its details, with "Keep"/"Stop keeping".
import { api, sentence } from './api.js';
import { h, toast, when, dialog, field } from './ui.js';

/** Whether `key` lies under `folder` (whole segments; everything lies under the root). */
const under = (folder, key) => folder === '' || key.startsWith(`${folder}/`);

/** The rule that decides for what lies under `folder` (the deepest rule folder above it). */
function ruleFor(rules, folder) {
  return rules
    .filter((r) => r.path === folder || under(r.path, folder))
    .sort((a, b) => b.path.length - a.path.length)[0];
}

const where = (path) => (path ? `${path}/` : 'the whole workspace');

/** The organization's rules this session may see; none when they cannot be read. */
export async function listRules() {
  try {
    /** @type {{ rules: import('./types.js').LifecycleRule[] }} */
    const list = await api('GET', '/lifecycle');
    return list.rules;
  } catch {
    return [];
  }
}

/** A line under the breadcrumbs saying which rule deletes what is in `folder`, if one does. */
export function folderNote(rules, folder) {
  const rule = ruleFor(rules, folder);
  if (!rule) return null;
  return h(
    'p',
    { class: 'muted', id: 'lifecycle-note' },
    `Files here are deleted ${rule.days} day${rule.days === 1 ? '' : 's'} after their last change (the lifecycle rule on ${where(rule.path)}), unless kept.`,
  );
}

/**
 * The details pane's lifecycle row: what the deciding rule does to the file, and a button that
 * keeps it or stops keeping it (`onChange` redraws the pane).
 * @param {import('./types.js').StoredObject} o
 */
export function detailsRow(o, canChange, onChange) {
  const l = o.lifecycle;
  const text = o.keep
    ? l
      ? `Kept: the rule on ${where(l.rule)} (${l.days} days) does not delete it.`
      : 'Kept whatever lifecycle rules say.'
    : l
      ? `Deleted from ${when(l.expiresAt)} by the rule on ${where(l.rule)} (${l.days} days).`
      : 'No lifecycle rule deletes it.';
  const toggle = async () => {
    try {
      await api('POST', '/objects/keep', { json: { paths: [o.key], keep: !o.keep } });
      toast(o.keep ? 'Lifecycle rules apply to this file again.' : 'This file is kept.');
      onChange();
    } catch (err) {
      toast(sentence(err), 'error');
    }
  };
  return [
    h('dt', {}, 'Lifecycle'),
    h(
      'dd',
      { id: 'lifecycle-state' },
      text,
      canChange && (l || o.keep)
        ? h(
            'button',
            { type: 'button', class: 'ghost', id: 'keep-toggle', onclick: toggle },
            o.keep ? 'Stop keeping' : 'Keep',
          )
        : null,
    ),
  ];
}

/**
 * The rules dialog: every rule with a remove button, and a form (the folder on screen filled
 * in) that sets one. `onChange` redraws the page after a change.
 */
export async function rulesDialog(folder, canChange, onChange) {
  let rules;
  try {
    rules = (await api('GET', '/lifecycle')).rules;
  } catch (err) {
    toast(sentence(err), 'error');
    return;
  }
  const path = h('input', { type: 'text', value: folder, spellcheck: 'false', id: 'rule-path' });
  const days = h('input', {
    type: 'number',
    min: '1',
    max: '3650',
    value: '30',
    id: 'rule-days',
  });
  const body = h(
    'div',
    {},
    h(
      'p',
      { class: 'muted' },
      'Files under a folder are deleted once they are older than its days (counted from their last change). Where rules nest, the deepest folder decides; kept files are never deleted.',
    ),
    rules.length
      ? h(
          'table',
          {},
          h('thead', {}, h('tr', {}, h('th', {}, 'Folder'), h('th', {}, 'Days'), h('th', {}, ''))),
          h(
            'tbody',
            {},
            rules.map((r, i) =>
              h(
                'tr',
                {},
                h('td', {}, h('code', {}, where(r.path))),
                h('td', { class: 'num' }, String(r.days)),
                h(
                  'td',
                  {},
                  canChange
                    ? h(
                        'button',
                        {
                          value: `remove:${i}`,
                          class: 'ghost danger',
                          'aria-label': `Remove the rule on ${where(r.path)}`,
                        },
                        'Remove',
                      )
                    : null,
                ),
              ),
            ),
          ),
        )
      : h('p', {}, 'No lifecycle rules yet: files are kept until deleted.'),
    canChange
      ? [field('Folder (empty: the whole workspace)', path), field('Delete after (days)', days)]
      : null,
  );
  const choice = await dialog(
    'Lifecycle rules',
    body,
    canChange
      ? [
          ['Close', ''],
          ['Save rule', 'save', 'primary'],
        ]
      : [['Close', '']],
  );
  try {
    if (choice === 'save') {
      const saved = await api('PUT', '/lifecycle', {
        json: { path: path.value.trim(), days: Number(days.value) },
      });
      toast(`Files under ${where(saved.rule.path)} are deleted after ${saved.rule.days} days.`);
      onChange();
    } else if (choice.startsWith('remove:')) {
      const removed = rules[Number(choice.slice('remove:'.length))];
      // spelled out: an empty path (the workspace's rule) must still be sent
      await api('DELETE', `/lifecycle?path=${encodeURIComponent(removed.path)}`);
      toast(`The rule on ${where(removed.path)} is removed.`);
      onChange();
    }
  } catch (err) {
    toast(sentence(err), 'error');
  }
}
