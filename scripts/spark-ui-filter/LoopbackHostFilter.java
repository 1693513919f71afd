// A servlet filter of every Spark UI the service starts (local drivers, SQL engines, the History Server),
// set with spark.ui.filters: they listen on loopback, where any web page the developer opens could reach
// them through a DNS name rebound to 127.0.0.1. Such a request carries that name in Host, and a page of
// another site says so in Sec-Fetch-Site: both are refused (403). The API's proxy sends Host 127.0.0.1:<port>
// and no Origin; curl and Spark's own tools send loopback names too.
package sparkorchestrator;

import java.io.IOException;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.FilterConfig;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

public final class LoopbackHostFilter implements Filter {
  @Override
  public void init(FilterConfig config) {}

  @Override
  public void destroy() {}

  /** localhost, 127.0.0.0/8 or [::1], with or without a port. */
  static boolean loopbackHost(String host) {
    if (host == null) return false;
    String h = host.trim().toLowerCase();
    if (h.startsWith("[")) {
      int end = h.indexOf(']');
      return end > 0 && h.substring(0, end + 1).equals("[::1]") && validPort(h.substring(end + 1));
    }
    int colon = h.indexOf(':');
    String name = colon < 0 ? h : h.substring(0, colon);
    if (colon >= 0 && !validPort(h.substring(colon))) return false;
    if (name.endsWith(".")) name = name.substring(0, name.length() - 1);
    return name.equals("localhost") || name.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
  }

  private static boolean validPort(String rest) {
    return rest.isEmpty() || rest.matches(":\\d{1,5}");
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest r = (HttpServletRequest) req;
    String site = r.getHeader("Sec-Fetch-Site");
    boolean foreignPage = "cross-site".equals(site) || "same-site".equals(site);
    if (!loopbackHost(r.getHeader("Host")) || foreignPage) {
      ((HttpServletResponse) res).sendError(403, "only loopback names, from this site");
      return;
    }
    chain.doFilter(req, res);
  }
}
