#!/usr/bin/env node
// The `xdskit` executable. It is a committed file rather than dist/bin.js, so that a package manager can link it
// into node_modules/.bin before the package is built (pnpm warns "Failed to create bin" otherwise).
import "../dist/bin.js";
