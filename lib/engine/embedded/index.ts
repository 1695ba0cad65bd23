export { EmbeddedEngine, openEmbeddedEngine, type EmbeddedEngineOptions } from './embedded-engine';
