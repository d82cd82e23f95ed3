#!/usr/bin/env node
// The plugin's entry point for buf (`local:` in buf.gen.views.yaml).
import { runNodeJs } from "@bufbuild/protoplugin";
import { protocGenXdsViews } from "./plugin.mjs";

runNodeJs(protocGenXdsViews);
