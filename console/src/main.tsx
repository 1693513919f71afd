// Entry point of the web console bundle (scripts/build-console.mjs): mounts the app into index.html.
import { render } from 'preact';
import { App } from './app';
import './styles.css';

render(<App />, document.getElementById('app')!);
