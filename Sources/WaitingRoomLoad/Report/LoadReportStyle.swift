/// The load report's style sheet (inline).
enum LoadReportStyle {
    static let css = #"""
        body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f3f5f9;color:#1b2330}
        header{background:#1b2330;color:#fff;padding:.9rem 1.5rem}
        header h1{font-size:1.25rem;margin:0}
        header p{margin:.3rem 0 0;color:#b9c4d6;font-size:.9rem}
        main{padding:1rem 1.5rem}
        .cards{display:flex;gap:.8rem;flex-wrap:wrap}
        .card{background:#fff;border-radius:10px;padding:.6rem 1rem;box-shadow:0 1px 6px rgba(0,0,0,.06);min-width:8rem}
        .card span{display:block;font-size:.8rem;color:#5a6b85}
        .card b{font-size:1.5rem}
        .charts{display:flex;gap:1rem;flex-wrap:wrap;margin:1rem 0}
        figure{flex:1;min-width:300px;background:#fff;border-radius:10px;margin:0;padding:.6rem .8rem;box-shadow:0 1px 6px rgba(0,0,0,.06)}
        figcaption{font-size:.9rem;font-weight:600;margin-bottom:.3rem}
        svg{width:100%;height:auto}
        .tables{display:flex;gap:1rem;flex-wrap:wrap;align-items:flex-start}
        table{background:#fff;border-radius:10px;border-collapse:collapse;box-shadow:0 1px 6px rgba(0,0,0,.06);font-size:.88rem;min-width:16rem}
        caption{text-align:left;font-weight:600;padding:.4rem .2rem}
        th,td{text-align:left;padding:.35rem .7rem;border-bottom:1px solid #e6eaf0}
        thead th{color:#5a6b85}
        td.num{text-align:right;font-variant-numeric:tabular-nums}
        .operators{margin:1rem 0}
        .operators h2{font-size:1.05rem;margin:.2rem 0 .6rem}
        .operators .charts figure{max-width:44rem}
        .note{font-size:.82rem;color:#5a6b85;max-width:60rem}
        """#
}
