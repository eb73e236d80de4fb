// Join: the QR code is drawn by the hub; this page only keeps the banners live.
import { start } from "./core.js";

start();
