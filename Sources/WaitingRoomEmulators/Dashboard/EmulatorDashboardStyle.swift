/// The dashboard's style sheet (inline).
enum EmulatorDashboardStyle {
    static let css = #"""
        body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f3f5f9;color:#1b2330}
        header{background:#1b2330;color:#fff;padding:.8rem 1.5rem;display:flex;align-items:baseline;gap:1.5rem}
        header h1{font-size:1.2rem;margin:0}
        #updated{margin:0;color:#b9c4d6;font-size:.85rem}
        main{padding:1rem 1.5rem}
        .charts{display:flex;gap:1rem;flex-wrap:wrap}
        figure{flex:1;min-width:300px;background:#fff;border-radius:10px;margin:0;padding:.6rem .8rem;box-shadow:0 1px 6px rgba(0,0,0,.06)}
        figcaption{font-size:.9rem;font-weight:600;margin-bottom:.3rem}
        svg{width:100%;height:auto}
        section.vendor{background:#fff;border-radius:10px;margin:1rem 0;padding:.8rem 1rem;box-shadow:0 1px 6px rgba(0,0,0,.06)}
        section.vendor h2{font-size:1.1rem;margin:.2rem 0 .5rem}
        .totals{display:flex;gap:1.2rem;flex-wrap:wrap;margin:.2rem 0 .6rem;font-size:.9rem}
        .totals b{font-size:1.1rem}
        table{border-collapse:collapse;width:100%;font-size:.88rem}
        th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #e6eaf0;vertical-align:middle}
        th{color:#5a6b85;font-weight:600}
        td.num{text-align:right;font-variant-numeric:tabular-nums}
        button{font:inherit;font-size:.8rem;padding:.2rem .5rem;margin:.1rem;border:1px solid #9aa8bd;border-radius:5px;background:#f7f9fc;cursor:pointer}
        button:hover{background:#e6ecf5}
        input{width:5rem;font:inherit;font-size:.85rem}
        .counters{color:#5a6b85;font-size:.8rem;margin:.4rem 0}
        .controls{margin:.4rem 0}
        #action{font-size:.85rem;color:#3a4a60}
        """#
}
