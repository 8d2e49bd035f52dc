#!/usr/bin/env node
// The CLI is compiled to lib/ by `npm run build`.
import "../lib/cli.js";
