/**
 * Renders an OpenAPI 3.1 document as one self-contained HTML page: no scripts, no fonts, no
 * external resources, only an inline stylesheet allowed by its hash in the page's own CSP.
 */

type Json = Record<string, unknown>;

interface Operation {
  method: string;
  path: string;
  operation: Json;
}

const methods = ['get', 'post', 'put', 'patch', 'delete'] as const;
const schemaDepthMax = 6;

export function escapeHtml(text: unknown): string {
  return String(text).replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);
}

export const docsStylesheet = `
:root{color-scheme:light dark;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--code:#f6f8fa;--accent:#0b5cad}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9da7b3;--line:#30363d;--bg:#0d1117;--code:#161b22;--accent:#58a6ff}}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
.layout{display:grid;grid-template-columns:16rem minmax(0,1fr);min-height:100vh}
nav{border-right:1px solid var(--line);padding:1rem;position:sticky;top:0;height:100vh;overflow:auto;font-size:14px}
nav h2{font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);margin:1rem 0 .25rem}
nav a{display:block;color:var(--fg);text-decoration:none;padding:.1rem 0}nav a:hover{color:var(--accent)}
main{padding:2rem;max-width:64rem;min-width:0;overflow-wrap:break-word}h1{margin-top:0}h2.group{border-bottom:1px solid var(--line);padding-bottom:.25rem;margin-top:2.5rem}
section.op{border:1px solid var(--line);border-radius:6px;margin:1rem 0;padding:1rem}
.sig{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:14px;word-break:break-all}
.method{display:inline-block;min-width:4.5rem;text-align:center;font-weight:700;border-radius:4px;padding:0 .4rem;margin-right:.5rem;color:#fff}
.get{background:#1f7a3d}.post{background:#0b5cad}.put,.patch{background:#9a6700}.delete{background:#b42318}
table{border-collapse:collapse;width:100%;margin:.5rem 0;font-size:14px}th,td{border:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top}
.table{overflow-x:auto}td:last-child{overflow-wrap:anywhere}th{background:var(--code)}code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--code);padding:0 .2rem;border-radius:3px}
.muted{color:var(--muted)}h4{margin:1rem 0 .25rem}.lock{font-size:13px;color:var(--muted)}
@media (max-width:800px){.layout{grid-template-columns:minmax(0,1fr)}nav{position:static;height:auto;border-right:0;border-bottom:1px solid var(--line)}}
`;

export function renderDocs(document: Json): string {
  const info = (document.info ?? {}) as Json;
  const groups = groupOperations(document);
  const nav = [...groups]
    .map(([group, operations]) => `<h2>${escapeHtml(group)}</h2>${operations.map((op) => `<a href="#${anchor(op)}">${escapeHtml(op.method.toUpperCase())} ${escapeHtml(shortPath(op.path))}</a>`).join('')}`)
    .join('');
  const body = [...groups].map(([group, operations]) => `<h2 class="group">${escapeHtml(group)}</h2>${operations.map((op) => renderOperation(document, op)).join('')}`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(info.title ?? 'API')} API reference</title><style>${docsStylesheet}</style></head>
<body><div class="layout"><nav><strong>${escapeHtml(info.title ?? 'API')}</strong> <span class="muted">${escapeHtml(info.version ?? '')}</span>${nav}</nav>
<main><h1>${escapeHtml(info.title ?? 'API')} API reference</h1><p>${prose(info.description ?? '')}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${escapeHtml(document.openapi ?? '')}).</p>${body}</main></div></body></html>`;
}

function groupOperations(document: Json): Map<string, Operation[]> {
  const groups = new Map<string, Operation[]>();
  const paths = (document.paths ?? {}) as Record<string, Json>;
  for (const path of Object.keys(paths).sort()) {
    for (const method of methods) {
      const operation = paths[path]![method] as Json | undefined;
      if (!operation) continue;
      const group = (operation.tags as string[] | undefined)?.[0] ?? groupOf(path);
      if (!groups.has(group)) groups.set(group, []);
      groups.get(group)!.push({ method, path, operation });
    }
  }
  return new Map([...groups].sort(([a], [b]) => groupOrder(a) - groupOrder(b) || a.localeCompare(b)));
}

/** Resources are named by the first segment after the API prefix, e.g. `channels`. */
function groupOf(path: string): string {
  const match = /\/site-json\/[^/]+\/v\d+\/([^/]+)/.exec(path);
  if (!match) return serviceGroup;
  return match[1]!.charAt(0).toUpperCase() + match[1]!.slice(1).replace(/[-_]/g, ' ');
}

const serviceGroup = 'Service';
// Credentials first (every other call needs one), the service's own probes last.
const groupOrder = (group: string) => (group === 'Authentication' ? 0 : group === 'API tokens' ? 1 : group === serviceGroup ? 3 : 2);

/** Escapes, then shows `backticked` words as code. */
// A description's lines (a list of cases) stay lines on the page.
function prose(text: unknown): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>').replace(/\n/g, '<br>');
}

function shortPath(path: string): string {
  return path.replace(/^\/\{path\}\/site-json\/[^/]+\/v\d+/, '');
}

function anchor(op: Operation): string {
  return `${op.method}-${op.path.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}`;
}

function renderOperation(document: Json, op: Operation): string {
  const { operation } = op;
  const security = (operation.security ?? document.security) as unknown[] | undefined;
  const parameters = ((operation.parameters ?? []) as Json[]).map((parameter) => [
    `<code>${escapeHtml(parameter.name)}</code>`,
    escapeHtml(parameter.in),
    parameter.required ? 'yes' : '',
    describeSchema(document, withDescription(parameter.schema as Json | undefined, parameter.description), 0),
  ]);
  const requestSchema = ((((operation.requestBody as Json | undefined)?.content as Json | undefined)?.['application/json'] as Json | undefined)?.schema) as Json | undefined;
  const responses = Object.entries((operation.responses ?? {}) as Record<string, Json>).map(([status, response]) => {
    const schema = ((response.content as Json | undefined)?.['application/json'] as Json | undefined)?.schema as Json | undefined;
    const headers = Object.entries((response.headers ?? {}) as Record<string, Json>).map(([name, header]) => [
      `<code>${escapeHtml(name)}</code>`,
      describeSchema(document, withDescription(header.schema as Json | undefined, header.description), 0),
    ]);
    return `<h4>${escapeHtml(status)} <span class="muted">${escapeHtml(response.description ?? '')}</span></h4>${headers.length > 0 ? `<p>Headers</p>${table(['header', 'schema'], headers)}` : ''}${schema ? describeSchema(document, schema, 0) : ''}`;
  });
  return `<section class="op" id="${anchor(op)}">
<div class="sig"><span class="method ${op.method}">${op.method.toUpperCase()}</span>${escapeHtml(op.path)}</div>
<p>${prose(operation.summary ?? '')}</p>${operation.description ? `<p>${prose(operation.description)}</p>` : ''}
<p class="lock">${security && security.length > 0 ? 'Requires <code>Authorization: Bearer &lt;token&gt;</code>.' : 'No credential needed.'}</p>
${parameters.length > 0 ? `<h4>Parameters</h4>${table(['name', 'in', 'required', 'schema'], parameters)}` : ''}
${requestSchema ? `<h4>Request body <span class="muted">application/json</span></h4>${describeSchema(document, requestSchema, 0)}` : ''}
<h4>Responses</h4>${responses.join('')}</section>`;
}

function table(headers: string[], rows: string[][]): string {
  // In its own scrolling box: on a phone a wide table scrolls sideways, not the whole page.
  return `<div class="table"><table><thead><tr>${headers.map((header) => `<th>${header}</th>`).join('')}</tr></thead><tbody>${rows.map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join('')}</tr>`).join('')}</tbody></table></div>`;
}

function resolve(document: Json, schema: Json): Json {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
  let target: unknown = document;
  for (const part of ref.slice(2).split('/')) target = (target as Json | undefined)?.[part];
  return (target as Json | undefined) ?? schema;
}

/** A schema as HTML: objects become a table of their properties, the rest one line. */
/** A parameter's or header's schema with the description OpenAPI keeps beside it, shown as a field's is. */
function withDescription(schema: Json | undefined, description: unknown): Json | undefined {
  return schema && typeof description === 'string' ? { ...schema, description } : schema;
}

function describeSchema(document: Json, raw: Json | undefined, depth: number): string {
  if (!raw) return '';
  const schema = resolve(document, raw);
  if (schema.type === 'object' && schema.properties && depth < schemaDepthMax) {
    const required = new Set((schema.required ?? []) as string[]);
    const rows = Object.entries(schema.properties as Record<string, Json>).map(([name, property]) => [
      `<code>${escapeHtml(name)}</code>`,
      required.has(name) ? 'yes' : '',
      describeSchema(document, property, depth + 1),
    ]);
    return `${schema.description ? `<span class="muted">${escapeHtml(schema.description)}</span>` : ''}${table(['field', 'required', 'schema'], rows)}`;
  }
  if (schema.type === 'array' && schema.items && depth < schemaDepthMax) {
    const items = resolve(document, schema.items as Json);
    const inner = describeSchema(document, items, depth + 1);
    return items.type === 'object' ? `array of:${inner}` : `array of ${inner}`;
  }
  return escapeHtml(oneLine(document, schema));
}

function oneLine(document: Json, schema: Json): string {
  const variants = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (variants) return variants.map((variant) => oneLine(document, resolve(document, variant))).join(' or ');
  const parts: string[] = [];
  const type = Array.isArray(schema.type) ? (schema.type as string[]).join(' | ') : String(schema.type ?? (schema.const !== undefined ? typeof schema.const : 'any'));
  parts.push(schema.format ? `${type} (${String(schema.format)})` : type);
  if (schema.const !== undefined) parts.push(`= ${JSON.stringify(schema.const)}`);
  if (Array.isArray(schema.enum)) parts.push(`one of ${(schema.enum as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`);
  for (const [key, label] of [['minimum', 'min'], ['maximum', 'max'], ['minLength', 'min length'], ['maxLength', 'max length'], ['pattern', 'pattern'], ['default', 'default']] as const) {
    if (schema[key] !== undefined) parts.push(`${label} ${typeof schema[key] === 'string' ? schema[key] : JSON.stringify(schema[key])}`);
  }
  if (schema.description) parts.push(`: ${String(schema.description)}`);
  return parts.join(', ').replace(', :', ':');
}
