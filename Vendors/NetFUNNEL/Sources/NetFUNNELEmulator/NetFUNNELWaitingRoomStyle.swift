/// The waiting-room page's style sheet (inline: the page loads nothing else).
enum NetFUNNELWaitingRoomStyle {
    static let css = #"""
    body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#eef4f1;color:#17261f}
    main{max-width:40rem;margin:3rem auto;background:#fff;border-radius:12px;padding:2rem 2.5rem;box-shadow:0 2px 12px rgba(0,0,0,.08)}
    .vendor{margin:0;color:#4f6b5d;font-size:.85rem}
    h1{font-size:1.5rem;margin:.3rem 0 1rem}
    .message{background:#fff7e0;border-left:4px solid #e0a800;padding:.6rem .9rem;margin:0 0 1rem}
    .figures{display:flex;gap:1rem;margin:0 0 1.2rem;padding:0}
    .figures div{flex:1;background:#eef4f1;border-radius:8px;padding:.7rem .9rem}
    dt{font-size:.8rem;color:#4f6b5d}
    dd{margin:.2rem 0 0;font-size:1.6rem;font-weight:600}
    #eta{font-size:1.1rem}
    .bar{height:14px;background:#d5e2db;border-radius:7px;overflow:hidden}
    .fill{height:100%;background:#1f9a62;transition:width .6s ease}
    #status{color:#2f4439;font-size:.95rem}
    .meta{color:#4f6b5d;font-size:.85rem}
    body.blocked .fill{background:#c0392b}
    """#
}
