/// The dashboard page: a shell that ``EmulatorDashboardScript`` fills from `/_emulator/status`.
enum EmulatorDashboardHTML {
    static let page = """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
        <title>WaitingRoom emulator dashboard</title>
        <style>\(EmulatorDashboardStyle.css)</style></head>
        <body>
        <header><h1>WaitingRoom emulator</h1>
        <p id="updated" role="status" aria-live="polite">Loading…</p></header>
        <main>
        <section class="charts" aria-label="Last minutes">
        <figure><figcaption id="queue-caption">Users waiting (last 5 minutes)</figcaption>
        <svg id="chart-queue" viewBox="0 0 640 220" role="img" aria-labelledby="queue-caption"></svg></figure>
        <figure><figcaption id="rate-caption">Admissions per second (last 5 minutes)</figcaption>
        <svg id="chart-rate" viewBox="0 0 640 220" role="img" aria-labelledby="rate-caption"></svg></figure>
        </section>
        <div id="vendors"></div>
        <p id="action" role="status" aria-live="polite"></p>
        </main>
        <script>\(SVGChartScript.js)</script>
        <script>\(EmulatorDashboardScript.js)</script>
        </body></html>
        """
}
