/**
 * Stands in for `virtual:dashboard-assets`, which only the build provides (scripts/build.mjs), when
 * a test loads the handler's source in-process. No dashboard file is served there; the dashboard
 * is tested through the built bundles (test/browser/).
 */
const assets: Record<string, string> = {};
export default assets;
