// ESLint: typescript-eslint's recommended rules over our TypeScript; formatting is Prettier's (eslint-config-prettier
// turns off the rules it owns). `npm run lint` runs both, with no warnings allowed.
import js from "@eslint/js";
import globals from "globals";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["lib/", "dist/", "node_modules/", "coverage/", "**/*.d.mts", "eval/suites/", "test/fixtures/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      // Control characters are what our sanitisers look for in untrusted text and git's output.
      "no-control-regex": "off",
      // Prettier lays code out at 120 columns; comments are held to them too. A string is never cut.
      "max-len": [
        "error",
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true },
      ],
    },
  },
  prettier,
);
