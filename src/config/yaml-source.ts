import type { Document, Node } from 'yaml';
import { quoteBareEnvTokens } from './env.js';
import { YAML_PARSE_OPTIONS, yamlParser } from './yaml-script.js';

/** A parsed YAML/JSON file that can tell where a value (or a key) stands. */
export interface YamlSource {
  file: string;
  doc: Document.Parsed;
  /** line and column (1-based) of the value at `path`, else of its nearest ancestor; key=true: of the key */
  locate(path: readonly (string | number)[], key?: boolean): { line: number; col: number };
  syntaxErrors: { line: number; col: number; message: string }[];
}

const MAX_FILE = 4 * 1024 * 1024;

/** Parse text (YAML or JSON) keeping positions. */
export function parseYamlSource(file: string, text: string): YamlSource {
  const { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument } = yamlParser();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text.length > MAX_FILE ? '' : quoteBareEnvTokens(text), {
    ...YAML_PARSE_OPTIONS,
    lineCounter,
  });
  const pos = (offset: number) => {
    const p = lineCounter.linePos(offset);
    return { line: p.line, col: p.col };
  };
  const syntaxErrors = doc.errors.map((e) => ({
    ...pos(e.pos[0]),
    message: e.message.split('\n')[0] ?? 'syntax error',
  }));
  if (text.length > MAX_FILE) syntaxErrors.push({ line: 1, col: 1, message: `file larger than ${MAX_FILE} bytes` });
  return {
    file,
    doc,
    syntaxErrors,
    locate(path, key = false) {
      let node: unknown = doc.contents;
      let best = node;
      let keyNode: unknown;
      for (const seg of path) {
        keyNode = undefined;
        if (isMap(node)) {
          const pair = node.items.find(
            (p) => isPair(p) && (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(seg),
          );
          if (!pair) break;
          keyNode = pair.key;
          node = pair.value;
        } else if (isSeq(node) && typeof seg === 'number') {
          node = node.items[seg];
        } else break;
        if (!node) break;
        best = node;
      }
      const target = (key && keyNode ? keyNode : best) as Node | null;
      const offset = target?.range?.[0] ?? 0;
      return pos(offset);
    },
  };
}
