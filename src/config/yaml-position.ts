import { isMap, isScalar, type Document, type LineCounter, type Node } from "yaml";

/** Where a value sits in the file, 1-based, as editors count. */
export interface SourcePosition {
  line: number;
  column: number;
}

/**
 * The position of the value at `path` in a parsed YAML document, or of `key` itself inside the
 * map at `path` (for a key that should not be there). A path that does not exist (a missing
 * field) points at the nearest enclosing value that does.
 */
export function positionOf(
  doc: Document,
  counter: LineCounter,
  path: ReadonlyArray<PropertyKey>,
  key?: string,
): SourcePosition | null {
  const segments = path.filter(
    (segment): segment is string | number => typeof segment === "string" || typeof segment === "number",
  );
  for (let depth = segments.length; depth >= 0; depth--) {
    const node = nodeAt(doc, segments.slice(0, depth));
    if (!node) continue;
    if (key !== undefined && depth === segments.length && isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === key);
      const keyNode = pair && isScalar(pair.key) ? pair.key : null;
      if (keyNode?.range) return positionAt(counter, keyNode.range[0]);
    }
    if (node.range) return positionAt(counter, node.range[0]);
  }
  return null;
}

function nodeAt(doc: Document, path: Array<string | number>): Node | null {
  if (path.length === 0) return doc.contents;
  const found: unknown = doc.getIn(path, true);
  return isNodeLike(found) ? found : null;
}

function isNodeLike(value: unknown): value is Node {
  return typeof value === "object" && value !== null && "range" in value;
}

/** A character offset as a 1-based line and column. */
export function positionAt(counter: LineCounter, offset: number): SourcePosition {
  const { line, col } = counter.linePos(offset);
  return { line, column: col };
}
