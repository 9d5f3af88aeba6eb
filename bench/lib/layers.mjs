// What the layer rows turn on, shared by bench/run.mjs, bench/ab.mjs and bench/soak.mjs.

/** Ten policy rules that every tools/call evaluates (none matches the demo's tools), under `default: allow`. */
export const TEN_RULES_POLICY = Object.freeze({
  default: 'allow',
  rules: Array.from({ length: 10 }, (_, i) => ({
    name: `deny-tool-${i}`,
    effect: 'deny',
    when: `component.kind == 'tool' && component.name == 'not-a-demo-tool-${i}' && request.method == 'tools/call'`,
  })),
});
