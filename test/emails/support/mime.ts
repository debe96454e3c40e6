/**
 * Just enough MIME to read what nodemailer writes (RFC 2045/2047): headers with encoded words,
 * multipart bodies, base64 and quoted-printable parts. Tests read mails as a person would.
 */
export interface ParsedMail {
  headers: Map<string, string>;
  subject: string;
  text: string;
  html: string;
}

export function parseMail(raw: string): ParsedMail {
  const part = parsePart(raw);
  const leaves = flatten(part);
  return {
    headers: part.headers,
    subject: part.headers.get('subject') ?? '',
    text: leaves.find((leaf) => leaf.type.startsWith('text/plain'))?.body ?? '',
    html: leaves.find((leaf) => leaf.type.startsWith('text/html'))?.body ?? '',
  };
}

interface Part {
  headers: Map<string, string>;
  type: string;
  body: string;
  children: Part[];
}

function parsePart(raw: string): Part {
  const normalised = raw.replace(/\r\n/g, '\n');
  const split = normalised.indexOf('\n\n');
  const head = split === -1 ? normalised : normalised.slice(0, split);
  const body = split === -1 ? '' : normalised.slice(split + 2);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\n[ \t]+/g, ' ').split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), decodeWords(line.slice(colon + 1).trim()));
  }
  const type = (headers.get('content-type') ?? 'text/plain').toLowerCase();
  const boundary = /boundary="?([^";]+)"?/i.exec(headers.get('content-type') ?? '')?.[1];
  if (type.startsWith('multipart/') && boundary) {
    const sections = body.split(`--${boundary}`).slice(1);
    const children = sections.filter((section) => !section.startsWith('--')).map((section) => parsePart(section.replace(/^\n/, '').replace(/\n$/, '')));
    // (The line break before a boundary belongs to the boundary, RFC 2046 5.1.1.)
    return { headers, type, body: '', children };
  }
  return { headers, type, body: decodeBody(body, headers.get('content-transfer-encoding') ?? '7bit'), children: [] };
}

function flatten(part: Part): Part[] {
  return part.children.length === 0 ? [part] : part.children.flatMap(flatten);
}

function decodeBody(body: string, encoding: string): string {
  switch (encoding.toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable':
      return quotedPrintable(body.replace(/=\n/g, ''));
    default:
      return body;
  }
}

function quotedPrintable(text: string): string {
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index++) {
    const hex = text.slice(index + 1, index + 3);
    if (text[index] === '=' && /^[0-9A-F]{2}$/i.test(hex)) {
      bytes.push(parseInt(hex, 16));
      index += 2;
    } else {
      bytes.push(...Buffer.from(text[index]!, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeWords(value: string): string {
  return value
    .replace(/(=\?[^?]+\?[BQbq]\?[^?]*\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?]+)\?([BQbq])\?([^?]*)\?=/g, (_whole, _charset: string, encoding: string, data: string) =>
      encoding.toUpperCase() === 'B' ? Buffer.from(data, 'base64').toString('utf8') : quotedPrintable(data.replace(/_/g, ' ')),
    );
}
