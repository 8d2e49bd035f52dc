/**
 * Tree-sitter tags queries, ours, written after the grammars' public tags.scm files. A capture
 * `@definition.<kind>` names a definition; `@reference` names an identifier the file uses where
 * it points at code defined elsewhere: calls, constructions, types, imports, base classes
 * and the like. Local variables and plain arguments are left out: they are noise in the graph.
 * `@reference.member` marks a method called on some object (`x.parseHeaders()`): which definition
 * it means is a guess by name, so it counts a quarter of a plain reference, and short plain
 * names (`x.get()`) not at all.
 */

const JS_DEFINITIONS = `
(function_declaration name: (identifier) @definition.function)
(generator_function_declaration name: (identifier) @definition.function)
(class_declaration name: (_) @definition.class)
(method_definition name: (property_identifier) @definition.method)
(program (lexical_declaration (variable_declarator name: (identifier) @definition.constant)))
(program (export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @definition.constant))))
(program (expression_statement (assignment_expression left: (member_expression property: (property_identifier) @definition.function) right: [(arrow_function) (function_expression)])))
`;

const JS_REFERENCES = `
(call_expression function: (identifier) @reference)
(call_expression function: (member_expression property: (property_identifier) @reference.member))
(new_expression constructor: (identifier) @reference)
(new_expression constructor: (member_expression property: (property_identifier) @reference.member))
(import_specifier name: (identifier) @reference)
(export_specifier name: (identifier) @reference)
`;

const JS_ONLY = `
(class_heritage (identifier) @reference)
`;

const JSX = `
(jsx_opening_element name: (identifier) @reference)
(jsx_self_closing_element name: (identifier) @reference)
`;

const TS_EXTRA = `
(extends_clause value: (identifier) @reference)
(abstract_class_declaration name: (type_identifier) @definition.class)
(interface_declaration name: (type_identifier) @definition.interface)
(type_alias_declaration name: (type_identifier) @definition.type)
(enum_declaration name: (identifier) @definition.enum)
(method_signature name: (property_identifier) @definition.method)
(abstract_method_signature name: (property_identifier) @definition.method)
(function_signature name: (identifier) @definition.function)
(internal_module name: (identifier) @definition.module)
(type_identifier) @reference
(nested_type_identifier name: (type_identifier) @reference.member)
`;

const PYTHON = `
(function_definition name: (identifier) @definition.function)
(class_definition name: (identifier) @definition.class)
(module (expression_statement (assignment left: (identifier) @definition.constant)))
(call function: (identifier) @reference)
(call function: (attribute attribute: (identifier) @reference.member))
(class_definition superclasses: (argument_list (identifier) @reference))
(import_from_statement name: (dotted_name (identifier) @reference))
(aliased_import name: (dotted_name (identifier) @reference))
(type (identifier) @reference)
(decorator (identifier) @reference)
`;

const GO = `
(function_declaration name: (identifier) @definition.function)
(method_declaration name: (field_identifier) @definition.method)
(type_spec name: (type_identifier) @definition.type)
(source_file (const_declaration (const_spec name: (identifier) @definition.constant)))
(source_file (var_declaration (var_spec name: (identifier) @definition.constant)))
(method_elem name: (field_identifier) @definition.method)
(call_expression function: (identifier) @reference)
(call_expression function: (selector_expression field: (field_identifier) @reference))
(type_identifier) @reference
(selector_expression field: (field_identifier) @reference)
`;

const RUST = `
(function_item name: (identifier) @definition.function)
(function_signature_item name: (identifier) @definition.function)
(struct_item name: (type_identifier) @definition.struct)
(enum_item name: (type_identifier) @definition.enum)
(union_item name: (type_identifier) @definition.union)
(trait_item name: (type_identifier) @definition.trait)
(type_item name: (type_identifier) @definition.type)
(mod_item name: (identifier) @definition.module)
(macro_definition name: (identifier) @definition.macro)
(const_item name: (identifier) @definition.constant)
(static_item name: (identifier) @definition.constant)
(call_expression function: (identifier) @reference)
(call_expression function: (scoped_identifier name: (identifier) @reference))
(call_expression function: (field_expression field: (field_identifier) @reference.member))
(macro_invocation macro: (identifier) @reference)
(scoped_identifier name: (identifier) @reference)
(use_declaration argument: (identifier) @reference)
(use_list (identifier) @reference)
(type_identifier) @reference
`;

const JAVA = `
(class_declaration name: (identifier) @definition.class)
(interface_declaration name: (identifier) @definition.interface)
(enum_declaration name: (identifier) @definition.enum)
(record_declaration name: (identifier) @definition.class)
(annotation_type_declaration name: (identifier) @definition.interface)
(method_declaration name: (identifier) @definition.method)
(constructor_declaration name: (identifier) @definition.method)
(method_invocation name: (identifier) @reference)
(type_identifier) @reference
(scoped_identifier name: (identifier) @reference)
`;

const C_COMMON = `
(function_definition declarator: (function_declarator declarator: (identifier) @definition.function))
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @definition.function)))
(declaration declarator: (function_declarator declarator: (identifier) @definition.function))
(declaration declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @definition.function)))
(struct_specifier name: (type_identifier) @definition.struct body: (_))
(union_specifier name: (type_identifier) @definition.union body: (_))
(enum_specifier name: (type_identifier) @definition.enum body: (_))
(type_definition declarator: (type_identifier) @definition.type)
(preproc_def name: (identifier) @definition.macro)
(preproc_function_def name: (identifier) @definition.macro)
(call_expression function: (identifier) @reference)
(call_expression function: (field_expression field: (field_identifier) @reference))
(type_identifier) @reference
`;

const CPP_EXTRA = `
(class_specifier name: (type_identifier) @definition.class body: (_))
(function_definition declarator: (function_declarator declarator: (qualified_identifier name: (identifier) @definition.method)))
(function_definition declarator: (function_declarator declarator: (field_identifier) @definition.method))
(field_declaration declarator: (function_declarator declarator: (field_identifier) @definition.method))
(namespace_definition name: (namespace_identifier) @definition.module)
(namespace_identifier) @reference
(call_expression function: (qualified_identifier name: (identifier) @reference))
`;

const C_SHARP = `
(class_declaration name: (identifier) @definition.class)
(interface_declaration name: (identifier) @definition.interface)
(struct_declaration name: (identifier) @definition.struct)
(enum_declaration name: (identifier) @definition.enum)
(record_declaration name: (identifier) @definition.class)
(method_declaration name: (identifier) @definition.method)
(constructor_declaration name: (identifier) @definition.method)
(property_declaration name: (identifier) @definition.property)
(invocation_expression function: (identifier) @reference)
(invocation_expression function: (member_access_expression name: (identifier) @reference.member))
(object_creation_expression type: (identifier) @reference)
(base_list (identifier) @reference)
(variable_declaration type: (identifier) @reference)
(parameter type: (identifier) @reference)
(generic_name (identifier) @reference)
`;

const RUBY = `
(method name: (_) @definition.method)
(singleton_method name: (_) @definition.method)
(class name: (constant) @definition.class)
(class name: (scope_resolution name: (constant) @definition.class))
(module name: (constant) @definition.module)
(module name: (scope_resolution name: (constant) @definition.module))
(program (assignment left: (constant) @definition.constant))
(call method: (identifier) @reference)
(constant) @reference
`;

const PHP = `
(function_definition name: (name) @definition.function)
(method_declaration name: (name) @definition.method)
(class_declaration name: (name) @definition.class)
(interface_declaration name: (name) @definition.interface)
(trait_declaration name: (name) @definition.trait)
(enum_declaration name: (name) @definition.enum)
(const_element (name) @definition.constant)
(function_call_expression function: (name) @reference)
(function_call_expression function: (qualified_name (name) @reference))
(member_call_expression name: (name) @reference.member)
(scoped_call_expression name: (name) @reference)
(object_creation_expression (name) @reference)
(object_creation_expression (qualified_name (name) @reference))
(named_type (name) @reference)
(named_type (qualified_name (name) @reference))
(base_clause (name) @reference)
(class_interface_clause (name) @reference)
(namespace_use_clause (qualified_name (name) @reference))
(scoped_call_expression scope: (name) @reference)
`;

/** The grammar file (in @repomix/tree-sitter-wasms) and tags query of each parsed language. */
export const PARSED_LANGUAGES = {
  typescript: { grammar: "tree-sitter-typescript.wasm", query: JS_DEFINITIONS + TS_EXTRA + JS_REFERENCES },
  tsx: { grammar: "tree-sitter-tsx.wasm", query: JS_DEFINITIONS + TS_EXTRA + JS_REFERENCES + JSX },
  javascript: { grammar: "tree-sitter-javascript.wasm", query: JS_DEFINITIONS + JS_ONLY + JS_REFERENCES + JSX },
  python: { grammar: "tree-sitter-python.wasm", query: PYTHON },
  go: { grammar: "tree-sitter-go.wasm", query: GO },
  rust: { grammar: "tree-sitter-rust.wasm", query: RUST },
  java: { grammar: "tree-sitter-java.wasm", query: JAVA },
  c: { grammar: "tree-sitter-c.wasm", query: C_COMMON },
  cpp: { grammar: "tree-sitter-cpp.wasm", query: C_COMMON + CPP_EXTRA },
  csharp: { grammar: "tree-sitter-c_sharp.wasm", query: C_SHARP },
  ruby: { grammar: "tree-sitter-ruby.wasm", query: RUBY },
  php: { grammar: "tree-sitter-php.wasm", query: PHP },
} as const;

export type ParsedLanguage = keyof typeof PARSED_LANGUAGES;

const BY_EXTENSION: Record<string, ParsedLanguage> = {
  ts: "typescript",
  mts: "typescript",
  cts: "typescript",
  tsx: "tsx",
  js: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  jsx: "javascript",
  py: "python",
  pyi: "python",
  go: "go",
  rs: "rust",
  java: "java",
  c: "c",
  h: "c",
  cc: "cpp",
  cpp: "cpp",
  cxx: "cpp",
  hpp: "cpp",
  hh: "cpp",
  hxx: "cpp",
  cs: "csharp",
  rb: "ruby",
  php: "php",
};

/** The parsed language of a path, by its extension; undefined for the regex outline or none. */
export function parsedLanguageOf(file: string): ParsedLanguage | undefined {
  const dot = file.lastIndexOf(".");
  if (dot < 0 || dot < file.lastIndexOf("/")) return undefined;
  return BY_EXTENSION[file.slice(dot + 1).toLowerCase()];
}
