import { render } from 'preact';
import { App } from './app';
import { applyTheme, loadTheme } from './theme';

// Before the first render, so a chosen dark theme never flashes light.
applyTheme(loadTheme());
const root = document.getElementById('app');
if (root) render(<App />, root);
