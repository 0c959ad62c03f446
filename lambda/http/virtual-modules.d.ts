/** Provided by scripts/build.mjs: the built dashboard files by name (index.html, app.js, app.css). */
declare module 'virtual:dashboard-assets' {
  const assets: Record<string, string>;
  export default assets;
}
