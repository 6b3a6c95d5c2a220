// @ts-check
// The object browser's uploads: files dropped or chosen (with progress, and what to do with a
// name that is taken), new folders, upload URLs.
import { api, upload, sentence, ApiError } from './api.js';
import { h, toast, when, dialog, copy, field } from './ui.js';
import { link } from './objects-state.js';
import { can, loadPage } from './objects-listing.js';

export function dropTarget(state, el) {
  if (!can(state, 'write')) return;
  el.addEventListener('dragover', (e) => {
    e.preventDefault();
    el.classList.add('over');
  });
  el.addEventListener('dragleave', () => el.classList.remove('over'));
  el.addEventListener('drop', (e) => {
    e.preventDefault();
    el.classList.remove('over');
    const files = [...(e.dataTransfer?.files || [])];
    if (files.length) uploadAll(state, files);
  });
}

export async function uploadAll(state, files) {
  const box = document.getElementById('uploads');
  const jobs = files.map((file) => {
    const bar = h('progress', { max: '1', value: '0', 'aria-label': `Upload of ${file.name}` });
    const status = h('span', { class: 'muted' }, 'waiting');
    const row = h(
      'div',
      { class: 'upload', 'data-name': file.name },
      h('span', { class: 'name' }, file.name),
      bar,
      status,
    );
    box.append(row);
    return { file, bar, status, row };
  });
  // three at a time: progress stays visible and the rate limit is not hammered
  let next = 0;
  // one question at a time when several files already exist
  let asking = Promise.resolve();
  const ask = (name) => {
    const answer = asking.then(() =>
      dialog(
        'Replace the existing file?',
        h(
          'p',
          {},
          `A file named ${name} is already in ${state.view?.path ? `${state.view.path}/` : 'this folder'}. Replacing it changes what its public URL serves.`,
        ),
        [
          ['Skip', ''],
          ['Keep both', 'both'],
          ['Replace', 'replace', 'danger'],
        ],
      ),
    );
    asking = answer.then(() => undefined);
    return answer;
  };
  const worker = async () => {
    while (next < jobs.length) {
      const j = jobs[next];
      next += 1;
      j.status.textContent = 'uploading';
      const progress = (f) => {
        j.bar.value = f;
      };
      const folder = state.view?.path || '';
      try {
        try {
          // never a silent replace: create only, and ask when the name is taken
          await upload(j.file, folder, progress, { createOnly: true });
        } catch (err) {
          if (!(err instanceof ApiError) || err.code !== 'PRECONDITION_FAILED') throw err;
          j.status.textContent = 'already exists';
          j.bar.value = 0;
          const choice = await ask(j.file.name);
          if (choice === 'replace') await upload(j.file, folder, progress);
          else if (choice === 'both') {
            const kept = await keepBoth(j.file, folder, progress);
            j.status.textContent = `kept both: ${kept}`;
          } else {
            j.status.textContent = 'skipped (already exists)';
            j.row.classList.add('ok', 'skipped');
            continue;
          }
        }
        j.bar.value = 1;
        if (!j.status.textContent.startsWith('kept both')) j.status.textContent = 'done';
        j.row.classList.add('ok');
      } catch (err) {
        j.status.textContent = sentence(err);
        j.row.classList.add('failed');
      }
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  const failed = jobs.filter((j) => j.row.classList.contains('failed')).length;
  const skipped = jobs.filter((j) => j.row.classList.contains('skipped')).length;
  const uploaded = jobs.length - failed - skipped;
  const parts = [`${uploaded} file${uploaded === 1 ? '' : 's'} uploaded`];
  if (skipped) parts.push(`${skipped} skipped`);
  if (failed) parts.push(`${failed} failed (see each file)`);
  toast(`${parts.join(', ')}.`, failed ? 'error' : 'info');
  setTimeout(() => {
    for (const j of jobs) if (!j.row.classList.contains('failed')) j.row.remove();
  }, 3000);
  await loadPage(state, true);
}

/**
 * Uploads `file` under the first free name `name (2).ext`, `name (3).ext`, … (create only, so a
 * name taken meanwhile is never replaced); the name it got.
 */
export async function keepBoth(file, folder, progress) {
  const dot = file.name.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [file.name.slice(0, dot), file.name.slice(dot)] : [file.name, ''];
  for (let n = 2; n <= 50; n += 1) {
    const name = `${stem} (${n})${ext}`;
    try {
      await upload(file, folder, progress, { createOnly: true, filename: name });
      return name;
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'PRECONDITION_FAILED') throw err;
    }
  }
  throw new ApiError(409, 'CONFLICT', `${stem} (2)${ext} to ${stem} (50)${ext} are all taken`);
}

/**
 * Opens a new sub-folder to upload into. Folders are the paths of their files: it exists once
 * a file is in it (until then it is shown only here).
 */
export async function newFolder(state) {
  const name = h('input', { type: 'text', name: 'folder', required: true, spellcheck: 'false' });
  const ok = await dialog(
    'New folder',
    h(
      'div',
      {},
      field('Name', name, 'letters, digits, - _ . (no /)'),
      h('p', { class: 'muted small' }, 'It is kept once a file is uploaded into it.'),
    ),
    [
      ['Cancel', ''],
      ['Open it', 'yes', 'primary'],
    ],
  );
  const text = name.value.trim().replace(/^\/+|\/+$/g, '');
  if (ok !== 'yes' || !text) return;
  if (text.includes('/') || text.startsWith('.')) {
    toast('A folder name has no “/” and does not start with a dot.', 'error');
    return;
  }
  state.view.navigate(link(state.view.path ? `${state.view.path}/${text}` : text));
}

export async function uploadUrlForm(state) {
  const path = h('input', { type: 'text', value: state.view.path, spellcheck: 'false' });
  const expires = h('input', { type: 'number', min: '1', value: '900' });
  const maxFiles = h('input', { type: 'number', min: '1', max: '1000', value: '1' });
  const maxSize = h('input', { type: 'number', min: '1', placeholder: 'workspace limit' });
  const mimes = h('input', {
    type: 'text',
    placeholder: 'e.g. image/png,image/jpeg (any when empty)',
  });
  const randomize = h('input', { type: 'checkbox' });
  const meta = h('input', { type: 'checkbox' });
  const choice = await dialog(
    'New upload URL',
    h(
      'div',
      { class: 'form-grid' },
      field('Folder', path, 'Files go here; the URL cannot write elsewhere.'),
      field('Valid for (seconds)', expires, 'Clamped to the plan’s maximum.'),
      field('Files', maxFiles),
      field('Largest file (bytes)', maxSize),
      field('Allowed types', mimes),
      h('label', { class: 'check' }, randomize, ' Give every file a random name'),
      h('label', { class: 'check' }, meta, ' Allow custom metadata'),
    ),
    [
      ['Cancel', ''],
      ['Create', 'yes', 'primary'],
    ],
  );
  if (choice !== 'yes') return;
  let r;
  try {
    r = await api('GET', '/presigned-url', {
      params: {
        path: path.value.trim(),
        expiresIn: expires.value,
        maxFiles: maxFiles.value,
        maxFileSize: maxSize.value,
        allowedMimeTypes: mimes.value.replace(/\s+/g, ''),
        randomizeName: randomize.checked,
        allowCustomMetadata: meta.checked,
      },
    });
  } catch (err) {
    toast(sentence(err), 'error');
    return;
  }
  const curl = `curl -F file=@screenshot.png '${r.uploadUrl}'`;
  const nui = [
    '// in-game web view (NUI): blob is the screenshot',
    'const form = new FormData();',
    "form.append('file', blob, 'screenshot.png');",
    `const res = await fetch('${r.uploadUrl}', { method: 'POST', body: form });`,
    'const { object } = await res.json(); // object.publicUrl',
  ].join('\n');
  const urlBox = h(
    'textarea',
    { readonly: true, rows: '3', id: 'upload-url', class: 'code' },
    r.uploadUrl,
  );
  await dialog(
    'Upload URL ready',
    h(
      'div',
      {},
      h(
        'p',
        {},
        `POST up to ${r.maxFiles} file${r.maxFiles > 1 ? 's' : ''} (form field “file”) ` +
          `before ${when(r.expiresAt)}${r.path ? ` into ${r.path}/` : ''}. ` +
          'No API key is needed, so hand it only to the script that uploads.',
      ),
      field('URL', urlBox),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', onclick: () => copy(r.uploadUrl, 'Upload URL') }, 'Copy URL'),
        h(
          'button',
          { type: 'button', onclick: () => copy(curl, 'curl command') },
          'Copy curl command',
        ),
      ),
      h('pre', { class: 'code' }, curl),
      h('pre', { class: 'code' }, nui),
    ),
    [['Done', 'ok', 'primary']],
  );
}
