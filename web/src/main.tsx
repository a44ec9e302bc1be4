import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import 'katex/dist/katex.min.css';
import './styles/theme.css';
import './styles/app.css';
import './styles/loading-mark.css';
import { App } from './App';

const root = document.getElementById('root');
if (!root) throw new Error('folio: index.html has no #root element');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
