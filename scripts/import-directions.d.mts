/** One import that crosses from one part of src/ to another. */
export interface CrossImport {
  /** The importing file's part: its first folder under src/, or "entries" for src/*.ts. */
  from: string;
  /** The imported file's part, or "pkg:github" / "pkg:redis" for those packages. */
  to: string;
  /** The importing file and what it names (a path relative to the root, or a package). */
  file: string;
  target: string;
}

export function partOf(file: string): string | undefined;
export function packagePart(specifier: string): string | undefined;
/** Every module specifier a source text names: import and export-from declarations (type-only too) and import(). */
export function specifiersOf(fileName: string, text: string): string[];
export function crossImports(root: string, dir?: string): CrossImport[];
export function countDirections(imports: CrossImport[]): Record<string, number>;
/** Every import of src/ with what it names (a relative specifier resolved to its file, relative to the root). */
export function fileImports(root: string, dir?: string): { file: string; specifier: string; target: string }[];
/** Files that import one another round in a circle (type-only imports included): each cycle's files, sorted. */
export function importCycles(root: string, dir?: string): string[][];
